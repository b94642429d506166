"""The generated shop: one compact row per record, made once from the seed.

A row holds only what listing needs (ids, times, status, sort names); the full JSON record
is built from ``(seed, id)`` when it is served (records.py), so 100 000 orders take a few
seconds and tens of megabytes. Every choice comes from a ``random.Random`` seeded with a
string (hashed with SHA-512, so the same across processes and platforms).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sandbox.shops import basket, table
from sandbox.shops.people import ODD_NAMES, Personas, odd_at
from sandbox.shops.timeline import BULK_EDITS, START, change_times
from sandbox.shops.woocommerce import names

FIRST_ORDER_ID = 1001
FIRST_POST_ID = 10  # products and variations share WordPress's post ids
FIRST_COUPON_ID = 7001
ADMIN_ID = 1
GUEST_EMAIL_ONLY_ORDER = FIRST_ORDER_ID + 1
NEGATIVE_LINE_ORDER = FIRST_ORDER_ID + 2


@dataclass(slots=True)
class Row:
    """What listing needs of one record; the rest is built on demand."""

    id: int
    created: int  # epoch seconds, UTC (0 = no date, as for categories)
    modified: int  # epoch seconds, UTC (0 = never modified: date_modified is null)
    status: str = ""
    parent: int = 0  # variation -> product, category -> parent category
    customer: int = 0  # order -> customer id (0 = guest)
    name: str = ""  # the title/name/code used by orderby
    kind: str = ""  # product type, coupon discount type, user role, variation options
    amount: int = 0  # price or coupon amount, in cents


#: a product an order line may hold; its options are its variations: (id, name, price)
Sellable = basket.Sellable[str, tuple[int, str, int]]


@dataclass
class Generated(table.Generated):
    negative: Sellable | None = None
    next_post_id: int = FIRST_POST_ID


#: the platform's customers, and the generator of any record's fields (``rng``)
PERSONAS = Personas("woocommerce", names.FIRST_NAMES, names.LAST_NAMES,
                    odd_at(ADMIN_ID + 1, ODD_NAMES))


def _customers(seed: int, n: int) -> list[Row]:
    rng = random.Random(f"woocommerce/{seed}/customers")
    admin = Row(ADMIN_ID, START - 86400 * 30, START - 86400 * 30, name="Shop Owner",
                kind="administrator")
    rows = [admin]
    for i, (created, modified) in enumerate(change_times(rng, n, BULK_EDITS["customers"])):
        cid = ADMIN_ID + 1 + i
        first, last, _ = PERSONAS.customer(seed, cid)
        never_updated = rng.random() < 0.1 and modified != BULK_EDITS["customers"][0]
        rows.append(Row(cid, created, 0 if never_updated else modified,
                        name=f"{first} {last}", kind="customer"))
    return rows


def _products(seed: int, n: int, out: Generated) -> tuple[list[Row], list[Row]]:
    rng = random.Random(f"woocommerce/{seed}/products")
    products: list[Row] = []
    variations: list[Row] = []
    post_id = FIRST_POST_ID
    for i, (created, modified) in enumerate(change_times(rng, n, BULK_EDITS["products"])):
        pid, post_id = post_id, post_id + 1
        kind = "variable" if i == 0 or (i > 12 and rng.random() < 0.3) else "simple"
        kind = {10: "external", 11: "grouped"}.get(i, kind)
        status = {6: "trash", 7: "trash", 8: "draft", 9: "private"}.get(i, "publish")
        if i in names.ODD_PRODUCTS:
            name = names.ODD_PRODUCTS[i][0]
        else:
            name = f"{rng.choice(basket.ADJECTIVES)} {rng.choice(list(names.NOUNS))}"
        price = -500 if i == 2 else 0 if kind == "grouped" else basket.price(rng)
        products.append(Row(pid, created, modified, status, name=name, kind=kind, amount=price))
        children: list[tuple[int, str, int]] = []
        if kind == "variable":
            count = 12 if i == 0 else rng.randrange(2, 7)
            for j in range(count):
                vid, post_id = post_id, post_id + 1
                option = f"{names.COLORS[j % len(names.COLORS)]}/{names.SIZES[j // len(names.COLORS) % len(names.SIZES)]}"
                vprice = price + rng.choice((0, 0, 100, 200, -100))
                vname = f"{name} - {option.replace('/', ', ')}"
                variations.append(Row(vid, created + j + 1, modified, "publish", parent=pid,
                                      name=vname, kind=option, amount=vprice))
                children.append((vid, vname, vprice))
        sellable = basket.Sellable(pid, name, price, tuple(children))
        if i == 2:
            out.negative = sellable
        elif kind in ("simple", "variable"):
            out.sellable.append(sellable)
    out.next_post_id = post_id
    return products, variations


_STATUS_WEIGHTS = (("completed", 60), ("processing", 14), ("on-hold", 5), ("pending", 5),
                   ("cancelled", 6), ("refunded", 5), ("failed", 3), ("trash", 2))


def _orders(seed: int, n: int, customers: int) -> list[Row]:
    rng = random.Random(f"woocommerce/{seed}/orders")
    rows = []
    for i, (created, modified) in enumerate(change_times(rng, n, BULK_EDITS["orders"])):
        oid = FIRST_ORDER_ID + i
        status = {4: "trash", 5: "checkout-draft"}.get(i) or (
            "completed" if i < 4 else basket.weighted(rng, _STATUS_WEIGHTS))
        guest = oid == GUEST_EMAIL_ONLY_ORDER or customers == 0 or rng.random() < 0.15
        customer = 0 if guest else rng.randrange(ADMIN_ID + 1, ADMIN_ID + 1 + customers)
        rows.append(Row(oid, created, modified, status, customer=customer,
                        name=f"order-{oid}"))
    return rows


def _coupons(seed: int) -> list[Row]:
    rng = random.Random(f"woocommerce/{seed}/coupons")
    rows = []
    for i, (created, modified) in enumerate(change_times(rng, len(names.COUPONS))):
        code, kind, amount, _ = names.COUPONS[i]
        rows.append(Row(FIRST_COUPON_ID + i, created, modified, "publish", name=code,
                        kind=kind, amount=amount))
    return rows


def generate(seed: int, *, customers: int, orders: int, products: int) -> Generated:
    out = Generated()
    product_rows, variation_rows = _products(seed, products, out)
    out.rows = {
        "customers": _customers(seed, customers),
        "products": product_rows,
        "variations": variation_rows,
        "orders": _orders(seed, orders, customers),
        "coupons": _coupons(seed),
        "categories": [Row(cid, 0, 0, "", parent=parent, name=name, kind=slug)
                       for cid, name, parent, slug in names.CATEGORIES],
    }
    return out
