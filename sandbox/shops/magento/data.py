"""The generated Magento shop: one compact row per record, made once from the seed.

A row holds what filtering and sorting need (ids, times, status, sku…); the full JSON record
is built from ``(seed, id)`` when it is served (records.py). Every choice comes from a
``random.Random`` seeded with a string, so a seed gives the same shop on every machine.

Quotes (carts) follow Magento's life cycle: every order was placed from a quote, which then
turned inactive with ``reserved_order_id`` set; the cron purges quotes older than the quote
lifetime (30 days), so only recent orders still have theirs, next to the active carts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sandbox.shops import basket
from sandbox.shops.magento import names
from sandbox.shops.people import ODD_NAMES, Personas, odd_at
from sandbox.shops.table import Generated
from sandbox.shops.timeline import BULK_EDITS, END, START, change_times

QUOTE_LIFETIME = 30 * 86400
#: the mass actions of every fake, and one on carts
BULK_SECONDS = {**BULK_EDITS, "carts": (END - 2 * 86400 + 23 * 3600 + 59 * 60 + 59, 0.30)}


@dataclass(slots=True)
class Row:
    """What listing needs of one record; the rest is built on demand."""

    id: int
    created: int  # epoch seconds, UTC
    updated: int  # epoch seconds, UTC
    status: str = ""  # order status
    state: str = ""  # order state
    active: bool = True  # product enabled, quote is_active, category is_active
    customer: int = 0  # order/quote -> customer id (0 = guest)
    parent: int = 0  # configurable child -> parent product, category -> parent category
    name: str = ""
    kind: str = ""  # product type_id
    sku: str = ""
    amount: int = 0  # product price, in cents
    order: int = 0  # quote -> the order placed from it (0 = still a cart)
    count: int = 0  # quote items_count


#: a product an order line may hold, its SKU the label; its options are its child
#: products: (id, sku, name, price)
Sellable = basket.Sellable[str, tuple[int, str, str, int]]


#: the platform's customers (the odd ones but "Bad Email": Magento validates an email), and
#: the generator of any record's fields (``rng``)
PERSONAS = Personas("magento", names.FIRST_NAMES, names.LAST_NAMES,
                    odd_at(1, [pair for pair in ODD_NAMES if pair[1] != "Email"]))


def _updated(rng: random.Random, created: int) -> int:
    """When a record created at ``created`` was last updated: a fifth never (Magento sets
    ``updated_at`` with ``created_at`` on insert), before ``END`` in any case."""
    r = rng.random()
    delay = (0 if r < 0.2 else rng.randrange(1, 600) if r < 0.45
             else rng.randrange(600, 5 * 86400) if r < 0.8
             else rng.randrange(5 * 86400, 120 * 86400))
    return min(created + delay, END - 1)


def _times(rng: random.Random, n: int, resource: str, start: int = START) -> list[tuple[int, int]]:
    """(created, updated) pairs, created ascending, some updated in one mass-action second."""
    return change_times(rng, n, BULK_SECONDS[resource], start=start, changed=_updated)


def _customers(seed: int, n: int) -> list[Row]:
    rng = random.Random(f"magento/{seed}/customers")
    rows = []
    for i, (created, updated) in enumerate(_times(rng, n, "customers")):
        first, last, email = PERSONAS.customer(seed, i + 1)
        rows.append(Row(i + 1, created, updated, name=f"{first} {last}", sku=email))
    return rows


def _products(seed: int, n: int, out: Generated) -> list[Row]:
    rng = random.Random(f"magento/{seed}/products")
    rows: list[Row] = []
    next_id = 1
    for i, (created, updated) in enumerate(_times(rng, n, "products")):
        pid, next_id = next_id, next_id + 1
        kind = "configurable" if i == 0 or (i > 5 and rng.random() < 0.25) else "simple"
        kind = "virtual" if i == 4 else kind
        if i in names.ODD_PRODUCTS:
            name = names.ODD_PRODUCTS[i][0]
        else:
            name = f"{rng.choice(basket.ADJECTIVES)} {rng.choice(list(names.NOUNS))}"
        # a SKU with a space and an accent: it must be URL-encoded in a path
        sku = "TEE Été" if i == 0 else f"MG{pid:05d}"
        price = basket.price(rng, 5)
        row = Row(pid, created, updated, active=i != 5, name=name, kind=kind, sku=sku,
                  amount=0 if kind == "configurable" else price)
        rows.append(row)
        children: list[tuple[int, str, str, int]] = []
        if kind == "configurable":
            for j in range(5 if i == 0 else rng.randrange(2, 5)):
                cid, next_id = next_id, next_id + 1
                color, size = names.COLORS[j % len(names.COLORS)], names.SIZES[j % len(names.SIZES)]
                cprice = price + rng.choice((0, 0, 100, 200, -100))
                csku, cname = f"{sku}-{color}-{size}", f"{name}-{color}-{size}"
                rows.append(Row(cid, created + j + 1, updated, active=True, parent=pid,
                                name=cname, kind="simple", sku=csku, amount=cprice))
                children.append((cid, csku, cname, cprice))
        if row.active:
            out.sellable.append(basket.Sellable(pid, name, price, tuple(children), sku))
    return rows


def _orders(seed: int, n: int, customers: int) -> list[Row]:
    rng = random.Random(f"magento/{seed}/orders")
    rows = []
    for i, (created, updated) in enumerate(_times(rng, n, "orders")):
        state, status = ("complete", "complete") if i < 3 else basket.weighted(
            rng, names.ORDER_STATES)
        guest = customers == 0 or i == 1 or rng.random() < 0.2
        customer = 0 if guest else rng.randrange(1, customers + 1)
        rows.append(Row(i + 1, created, updated, status, state, customer=customer))
    return rows


def line_count(rng: random.Random) -> int:
    return rng.choice(basket.LINE_COUNTS)


def _carts(seed: int, n: int, orders: list[Row], customers: int, sellable: bool) -> list[Row]:
    """Quotes still in the database: those of recent orders (inactive, ordered) and ``n``
    active carts, some of them empty."""
    rows = []
    for order in orders:
        if order.created >= END - QUOTE_LIFETIME:
            picked = line_count(PERSONAS.rng(seed, "orders", order.id)) if sellable else 0
            rows.append(Row(quote_id(order.id), order.created - 600, order.created,
                            active=False, customer=order.customer, order=order.id,
                            count=picked))
    rng = random.Random(f"magento/{seed}/carts")
    for k, (created, updated) in enumerate(_times(rng, n, "carts", END - QUOTE_LIFETIME)):
        guest = customers == 0 or rng.random() < 0.4
        count = 0 if rng.random() < 0.1 or not sellable else line_count(rng)
        rows.append(Row(2 * k + 1, created, updated, active=True,
                        customer=0 if guest else rng.randrange(1, customers + 1), count=count))
    return rows


def quote_id(order_id: int) -> int:
    """The quote an order was placed from (even ids; active carts have odd ones)."""
    return 2 * order_id


def _categories() -> list[Row]:
    rows = []
    for cid, name, parent, active in names.CATEGORIES:
        created = START - 400 * 86400 + cid * 3600
        updated = created if cid <= 2 else START + (cid * 7919) % (500 * 86400)
        rows.append(Row(cid, created, updated, active=active, parent=parent, name=name))
    return rows


def generate(seed: int, *, customers: int, orders: int, products: int, carts: int) -> Generated:
    out = Generated()
    order_rows = _orders(seed, orders, customers)
    product_rows = _products(seed, products, out)
    out.rows = {
        "customers": _customers(seed, customers),
        "products": product_rows,
        "orders": order_rows,
        "carts": _carts(seed, carts, order_rows, customers, bool(out.sellable)),
        "categories": _categories(),
    }
    return out
