"""The generated shop: one compact row per record, made once from the seed.

A row holds what listing and searching need (ids, times, status, names); the full GraphQL
record is built from ``(seed, id)`` when it is served (records.py). Ids are large integers
like Shopify's, and every GID is ``gid://shopify/{Type}/{id}``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sandbox.shops import basket
from sandbox.shops.people import Personas, odd_at
from sandbox.shops.shopify import names
from sandbox.shops.table import Generated
from sandbox.shops.timeline import BULK_EDITS, END, change_times

#: the bulk edits of every fake, and one on abandoned checkouts
BULK_SECONDS = {**BULK_EDITS, "checkouts": (END - 3 * 86400 + 22 * 3600 + 5, 0.20)}
BASE = {"customers": 6_210_000_000, "orders": 5_550_000_000, "products": 8_100_000_000,
        "variants": 44_000_000_000, "collections": 420_000_000, "checkouts": 33_000_000_000,
        "discounts": 1_170_000_000, "codes": 17_000_000_000, "events": 99_000_000_000,
        "lines": 13_000_000_000, "addresses": 8_800_000_000, "media": 30_000_000_000,
        "bulk": 720_900_000}
FIRST_ORDER_NUMBER = 1001
TYPENAMES = {"customers": "Customer", "orders": "Order", "products": "Product",
             "variants": "ProductVariant", "collections": "Collection",
             "checkouts": "AbandonedCheckout", "discounts": "DiscountCodeNode",
             "events": "BasicEvent"}


def gid(resource: str, record_id: int) -> str:
    return f"gid://shopify/{TYPENAMES[resource]}/{record_id}"


@dataclass(slots=True)
class Row:
    id: int
    created: int  # epoch seconds, UTC
    updated: int
    status: str = ""
    parent: int = 0  # variant -> product
    customer: int = 0  # order, checkout -> customer id (0: none)
    name: str = ""
    kind: str = ""
    amount: int = 0  # price in cents
    extra: str = ""  # event: subject type; checkout: completed flag


#: the platform's customers, and the generator of any record's fields (``rng``)
PERSONAS = Personas(
    "shopify", names.FIRST_NAMES, names.LAST_NAMES,
    odd_at(BASE["customers"] + 1, names.ODD_CUSTOMERS),
    odd_email=lambda customer_id: f"odd{customer_id - BASE['customers'] - 1}@example.org",
    tag=lambda customer_id: customer_id % 100000, domains=("example.com",))


def _customers(seed: int, n: int) -> list[Row]:
    rng = random.Random(f"shopify/{seed}/customers")
    rows = []
    for i, (created, updated) in enumerate(change_times(rng, n, BULK_SECONDS["customers"])):
        cid = BASE["customers"] + 1 + i
        first, last, _ = PERSONAS.customer(seed, cid)
        state = "DISABLED" if rng.random() < 0.05 else "ENABLED"
        rows.append(Row(cid, created, updated, state, name=f"{first} {last}"))
    return rows


def _products(seed: int, n: int, out: Generated) -> tuple[list[Row], list[Row]]:
    rng = random.Random(f"shopify/{seed}/products")
    products: list[Row] = []
    variants: list[Row] = []
    next_variant = BASE["variants"] + 1
    for i, (created, updated) in enumerate(change_times(rng, n, BULK_SECONDS["products"])):
        pid = BASE["products"] + 1 + i
        noun = rng.choice(list(names.NOUNS))
        adjective = rng.choice(basket.ADJECTIVES)
        title = {1: "Tasse ☕ « Café Crème »", 3: "כובע קש"}.get(i, f"{adjective} {noun}")
        status = {4: "DRAFT", 5: "ARCHIVED"}.get(i, "ACTIVE")
        price = basket.price(rng)
        vendor = rng.choice(names.VENDORS)
        products.append(Row(pid, created, updated, status, name=title, kind=noun, amount=price,
                            extra=vendor))
        count = 12 if i == 0 else rng.choice((1, 1, 2, 3, 4))
        children = []
        for j in range(count):
            vid, next_variant = next_variant, next_variant + 1
            option = ("Default Title" if count == 1 else
                      f"{names.COLORS[j % len(names.COLORS)]} / {names.SIZES[j // len(names.COLORS) % len(names.SIZES)]}")
            vprice = price + (0 if count == 1 else rng.choice((0, 0, 100, 200, -100)))
            variants.append(Row(vid, created, updated, "ACTIVE", parent=pid, name=option,
                                amount=vprice))
            children.append((vid, option, vprice, f"SKU-{vid % 1_000_000:06d}"))
        if status == "ACTIVE":
            # the vendor is the label; the options are the variants (id, title, price, sku)
            out.sellable.append(basket.Sellable(pid, title, price, tuple(children), vendor))
    return products, variants


def _orders(seed: int, n: int, customers: int) -> list[Row]:
    rng = random.Random(f"shopify/{seed}/orders")
    rows = []
    for i, (created, updated) in enumerate(change_times(rng, n, BULK_SECONDS["orders"])):
        guest = customers == 0 or rng.random() < 0.15
        customer = 0 if guest else BASE["customers"] + 1 + rng.randrange(customers)
        status = "PAID" if i < 3 else basket.weighted(rng, names.FINANCIAL_STATUSES)
        rows.append(Row(BASE["orders"] + 1 + i, created, updated, status, customer=customer,
                        name=f"#{FIRST_ORDER_NUMBER + i}"))
    return rows


def _checkouts(seed: int, n: int, customers: int) -> list[Row]:
    rng = random.Random(f"shopify/{seed}/checkouts")
    rows = []
    for i, (created, updated) in enumerate(change_times(rng, n, BULK_SECONDS["checkouts"])):
        customer = 0 if customers == 0 or rng.random() < 0.3 else (
            BASE["customers"] + 1 + rng.randrange(customers))
        completed = "completed" if rng.random() < 0.3 else ""
        rows.append(Row(BASE["checkouts"] + 1 + i, created, updated,
                        "closed" if completed else "open", customer=customer, extra=completed))
    return rows


def _collections(seed: int) -> list[Row]:
    rng = random.Random(f"shopify/{seed}/collections")
    return [Row(BASE["collections"] + 1 + i, created, updated, name=title, kind=handle)
            for i, ((handle, title), (created, updated))
            in enumerate(zip(names.COLLECTIONS, change_times(rng, len(names.COLLECTIONS)),
                             strict=True))]


def _discounts(seed: int) -> list[Row]:
    rng = random.Random(f"shopify/{seed}/discounts")
    rows = []
    for i, (created, updated) in enumerate(change_times(rng, len(names.DISCOUNTS))):
        title, kind, value, _, _ = names.DISCOUNTS[i]
        status = "EXPIRED" if i == 2 else "ACTIVE"
        rows.append(Row(BASE["discounts"] + 1 + i, created, updated, status, name=title,
                        kind=kind, amount=value))
    return rows


def _past_deletions(seed: int, products: int, orders: int) -> list[Row]:
    """Deletion events of records deleted before the shop was generated's end: their ids are
    past the generated ranges, so no record of theirs exists any more."""
    rng = random.Random(f"shopify/{seed}/events")
    rows = []
    for i, (resource, subject, count) in enumerate(
            (("products", "PRODUCT", products), ("orders", "ORDER", orders),
             ("collections", "COLLECTION", 9))):
        at = rng.randrange(END - 90 * 86400, END)
        deleted = BASE[resource] + count + 1 + 500 + i
        rows.append(Row(BASE["events"] + 1 + i, at, at, "destroy", parent=deleted,
                        name=f"{TYPENAMES[resource]} was deleted.", extra=subject))
    return rows


def generate(seed: int, *, customers: int, orders: int, products: int,
             checkouts: int) -> Generated:
    out = Generated()
    product_rows, variant_rows = _products(seed, products, out)
    out.rows = {
        "customers": _customers(seed, customers),
        "products": product_rows,
        "variants": variant_rows,
        "orders": _orders(seed, orders, customers),
        "checkouts": _checkouts(seed, checkouts, customers),
        "collections": _collections(seed),
        "discounts": _discounts(seed),
        "events": _past_deletions(seed, products, orders),
    }
    return out
