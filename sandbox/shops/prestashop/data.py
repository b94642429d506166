"""The generated shop: one compact row per record, made once from the seed.

A row holds what listing and filtering need (ids, times, the foreign keys connectors
filter on); the full record is built from ``(seed, id)`` when served (records.py), so a
hundred thousand orders start in seconds. Every choice comes from a ``random.Random``
seeded with a string, so the same seed gives the same shop on every machine.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sandbox.shops import basket, table
from sandbox.shops.people import ODD_NAMES, Personas, odd_at
from sandbox.shops.prestashop import names
from sandbox.shops.timeline import BULK_EDITS, END, START, change_times

#: the bulk edits of every fake, and one on carts (a CSV import, a mass status change)
BULK_SECONDS = {**BULK_EDITS, "carts": (END - 3 * 86400 + 2 * 3600 + 5, 0.10)}
PRODUCT_KINDS = ("standard", "combinations", "pack", "virtual")


@dataclass(slots=True)
class Row:
    """What listing needs of one record; the meaning of the generic columns is per resource
    (see fields.INDEX): customer, parent and state are the foreign keys and flags that
    connectors filter on."""

    id: int
    created: int  # epoch seconds, UTC (0: the resource has no dates)
    modified: int
    customer: int = 0
    parent: int = 0
    state: int = 0
    flag: int = 0
    extra: int = 0
    name: str = ""
    amount: int = 0  # cents


@dataclass
class Generated(table.Generated):
    #: product id -> its name in each language
    titles: dict[int, dict[int, str]] = field(default_factory=dict)


#: the platform's customers, and the generator of any record's fields (``rng``)
PERSONAS = Personas("prestashop", names.FIRST_NAMES, names.LAST_NAMES, odd_at(1, ODD_NAMES))


def _customers(seed: int, n: int, languages: int) -> list[Row]:
    rng = random.Random(f"prestashop/{seed}/customers")
    rows = []
    for i, (created, modified) in enumerate(change_times(rng, n, BULK_SECONDS["customers"])):
        cid = i + 1
        first, last, _ = PERSONAS.customer(seed, cid)
        # flag: 0 registered, 1 guest checkout, 2 deleted (kept with deleted=1)
        flag = 1 if cid == 6 or rng.random() < 0.12 else 2 if cid == 7 else 0
        rows.append(Row(cid, created, modified, parent=rng.randrange(1, languages + 1),
                        state=0 if cid == 8 else 1, flag=flag, name=f"{first} {last}"))
    return rows


def _addresses(seed: int, customers: list[Row]) -> list[Row]:
    rng = random.Random(f"prestashop/{seed}/addresses")
    made = [Row(0, customers[0].created + 60 if customers else START,
                customers[0].created + 60 if customers else START,
                customer=0, parent=8, extra=1)]  # a brand's address: not a customer's
    for customer in customers:
        for _ in range(2 if rng.random() < 0.3 else 1):
            at = customer.created + rng.randrange(0, 3600)
            city = rng.randrange(len(names.CITIES))
            made.append(Row(0, at, max(at, min(customer.modified, END)),
                            customer=customer.id, parent=names.CITIES[city][2], state=city,
                            flag=1 if rng.random() < 0.04 else 0))
    made.sort(key=lambda r: (r.created, r.customer))
    for i, row in enumerate(made):
        row.id = i + 1
    return made


def _products(seed: int, n: int, out: Generated) -> tuple[list[Row], list[Row]]:
    rng = random.Random(f"prestashop/{seed}/products")
    products: list[Row] = []
    combinations: list[Row] = []
    for i, (created, modified) in enumerate(change_times(rng, n, BULK_SECONDS["products"])):
        pid = i + 1
        kind = 1 if i == 0 or (i > 8 and rng.random() < 0.3) else 0
        kind = {5: 2, 6: 3}.get(i, kind)  # a pack and a virtual product
        if i in names.ODD_PRODUCTS:
            title, category = names.ODD_PRODUCTS[i]
        else:
            adjective = rng.choice(names.ADJECTIVES)
            noun, category = rng.choice(names.NOUNS)
            title = {lang: f"{adjective[lang]} {noun[lang]}" for lang in noun}
        price = 0 if i == 7 else basket.price(rng, 4, 90)  # a free sample
        row = Row(pid, created, modified, customer=rng.choice((0, 1, 2, 3)), parent=category,
                  state=0 if i == 8 else 1, flag=kind, extra=rng.choice((0, 1, 1, 2, 3)),
                  name=title[1], amount=price)
        products.append(row)
        out.titles[pid] = title
        children: list[tuple[int, int, str]] = []
        if kind == 1:
            count = 12 if i == 0 else rng.randrange(2, 7)
            for j in range(count):
                size, color = 1 + j % 4, 5 + (j // 4) % 4
                impact = rng.choice((0, 0, 100, 200, -100)) if j else 0
                combinations.append(Row(len(combinations) + 1, 0, 0, parent=pid,
                                        flag=1 if j == 0 else 0, extra=size * 100 + color,
                                        amount=impact))
                children.append((len(combinations), impact, f"{size},{color}"))
        if row.state and kind in (0, 1, 3):
            # priced tax excluded; its options are its combinations (id, price impact, "size,color")
            out.sellable.append(basket.Sellable(pid, title, price, tuple(children)))
    return products, combinations


def _carts_and_orders(seed: int, orders: int, abandoned: int, customers: int,
                      languages: int) -> tuple[list[Row], list[Row]]:
    rng = random.Random(f"prestashop/{seed}/orders")
    order_rows, carts = [], []
    for i, (created, modified) in enumerate(change_times(rng, orders, BULK_SECONDS["orders"])):
        customer = (4 if i == 1 and customers >= 4 else
                    rng.randrange(1, customers + 1) if customers else 0)
        lang, currency = rng.randrange(1, languages + 1), 2 if rng.random() < 0.1 else 1
        state = 5 if i < 3 else basket.weighted(rng, names.STATE_WEIGHTS)
        order_rows.append(Row(i + 1, created, modified, customer=customer, state=state,
                              flag=currency, extra=lang))
        cart_at = created - rng.randrange(60, 7200)
        carts.append(Row(0, cart_at, created - rng.randrange(5, 60), customer=customer,
                         parent=i + 1, flag=currency, extra=lang))
    crng = random.Random(f"prestashop/{seed}/carts")
    for created, modified in change_times(crng, abandoned, BULK_SECONDS["carts"]):
        anonymous = not customers or crng.random() < 0.3
        carts.append(Row(0, created, modified,
                         customer=0 if anonymous else crng.randrange(1, customers + 1),
                         flag=1, extra=crng.randrange(1, languages + 1),
                         state=1 if crng.random() < 0.1 else 0))  # state 1: an empty cart
    carts.sort(key=lambda r: (r.created, r.parent))
    for i, cart in enumerate(carts):
        cart.id = i + 1
        if cart.parent:
            order_rows[cart.parent - 1].parent = cart.id
            cart.parent = 0
    return carts, order_rows


def _static(rows: Iterable[tuple[Any, ...]], rng: random.Random, dated: bool,
            parented: bool = False) -> list[Row]:
    """Reference rows: (id, parent's id when ``parented``, …)."""
    out = []
    for values in rows:
        at = rng.randrange(START - 400 * 86400, START) if dated else 0
        modified = at + rng.randrange(0, 200 * 86400) if dated else 0
        out.append(Row(int(values[0]), at, modified, parent=values[1] if parented else 0))
    return out


def generate(seed: int, *, customers: int, orders: int, products: int, abandoned: int,
             languages: int) -> Generated:
    out = Generated()
    rng = random.Random(f"prestashop/{seed}/reference")
    product_rows, combination_rows = _products(seed, products, out)
    customer_rows = _customers(seed, customers, languages)
    carts, order_rows = _carts_and_orders(seed, orders, abandoned, customers, languages)
    out.rows = {
        "customers": customer_rows,
        "addresses": _addresses(seed, customer_rows),
        "products": product_rows,
        "combinations": combination_rows,
        "carts": carts,
        "orders": order_rows,
        "languages": _static(names.LANGUAGES, rng, False),
        "currencies": _static(names.CURRENCIES, rng, False),
        "countries": _static(names.COUNTRIES, rng, False),
        "order_states": _static(names.ORDER_STATES, rng, False),
        "carriers": _static(names.CARRIERS, rng, False),
        "product_options": _static(names.PRODUCT_OPTIONS, rng, False),
        "product_option_values": _static(names.PRODUCT_OPTION_VALUES, rng, False, True),
        "groups": _static(names.GROUPS, rng, True),
        "categories": _static(names.CATEGORIES, rng, True, True),
        "manufacturers": _static(names.MANUFACTURERS, rng, True),
        "cart_rules": _static([(i,) for i in range(1, 9)], rng, True),
        "configurations": _static([(i,) for i in range(1, 7)], rng, True),
    }
    return out
