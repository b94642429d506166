"""A generated in-house shop: the rows of its tables, made once from a seed.

The same shop feeds the fake database (``db.py``) and the fake file drop
(``sandbox.shops.files``). Times are naive and shop-local (``timezone``, Europe/Paris by
default), as in-house databases often keep them; a bulk edit put many records on one
second (ties wider than a page), and a few orders changed during the DST fall-back hour,
when local time runs twice. Some rows are wrong on purpose: a customer whose email is not
one, a product with a negative price, an order with a negative line price — they must be
quarantined, not sent. Every choice comes from a ``random.Random`` seeded with a string.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sandbox.shops import basket
from sandbox.shops.people import BAD_EMAIL
from sandbox.shops.timeline import BULK_EDITS

Row = dict[str, Any]

START = datetime(2024, 1, 1)
END = datetime(2025, 6, 24)  # the generated history ends here (shop-local time)
#: the bulk edits of every fake (``timeline.BULK_EDITS``), at the same shop-local seconds
BULK = {name: (datetime.fromtimestamp(at, UTC).replace(tzinfo=None), share)
        for name, (at, share) in BULK_EDITS.items()}
#: the fall-back hour of 2024 in Europe/Paris: 02:00-03:00 happened twice
DST_FOLD = datetime(2024, 10, 27, 2, 0, 0)
FIRST_ORDER_ID = 1001

FIRST_NAMES = ("Alice", "Bruno", "Chloé", "Dmitri", "Élodie", "Farid", "Greta", "Hugo", "Inès",
               "Jonas", "Kenji", "Léa", "Malik", "Noémie", "Oskar", "Priya", "Rosa", "Sven")
LAST_NAMES = ("Martin", "Dubois", "Müller", "García", "Rossi", "Nowak", "O'Brien", "Smith",
              "Nguyễn", "Silva", "Yılmaz", "Lefèvre", "van der Berg")
ODD_CUSTOMERS = (("Rene\u0301e", "Zoe\u0308lle"), ("مريم", "الحسيني"), ("Ana 🌸", "Lima"),
                 ("Bad", "Email"))
CITIES = (("Paris", "75011", "FR"), ("Lyon", "69003", "FR"), ("Bruxelles", "1000", "BE"),
          ("Berlin", "10115", "DE"), ("Köln", "50667", "DE"), ("Milano", "20121", "IT"))
NOUNS = ("T-Shirt", "Hoodie", "Cap", "Mug", "Poster", "Tea Tin", "Tote Bag", "Scarf")
COLORS = ("Red", "Blue", "Black", "Green")
STATES = (("new", "Awaiting payment", False), ("paid", "Payment accepted", True),
          ("shipped", "Shipped", True), ("delivered", "Delivered", True),
          ("cancelled", "Cancelled", False), ("refunded", "Refunded", False))
STATE_WEIGHTS = (8, 20, 15, 45, 7, 5)
CARRIERS = ((1, "Colissimo"), (2, "DHL Express"), (3, "Pickup point"))
GROUPS = ((1, "Retail"), (2, "Wholesale"), (3, "VIP"))
CATEGORIES = ((1, "Clothing", None, "clothing"), (2, "T-shirts", 1, "t-shirts"),
              (3, "Hoodies", 1, "hoodies"), (4, "Home & Décor", None, "home-decor"),
              (5, "Mugs", 4, "mugs"), (6, "Café ☕ & Thé", 4, "cafe-the"))
BRANDS = ((1, "Atelier Nord"), (2, "Maison Lumière"), (3, "Kōhī Works"))
#: (code, kind, value, minimum) — kinds are the shop's own words
COUPONS = (("WELCOME10", "percent", "10", "0"), ("5OFF", "amount", "5", "30"),
           ("FREESHIP", "shipping", "0", "50"), ("ÉTÉ25", "percent", "25", "100"))


@dataclass
class Shop:
    """The rows of every table, by table name, in insertion order."""

    seed: int
    tables: dict[str, list[Row]] = field(default_factory=dict)

    def ids(self, table: str) -> list[Any]:
        return [row["id"] for row in self.tables[table]]


def _rng(seed: int, what: str) -> random.Random:
    return random.Random(f"sql-shop/{seed}/{what}")


def _at(rng: random.Random, start: datetime = START, end: datetime = END) -> datetime:
    return start + timedelta(seconds=rng.randrange(int((end - start).total_seconds())))


def _times(rng: random.Random, n: int, bulk: str | None) -> list[tuple[datetime, datetime]]:
    """(created, updated) pairs, created ascending; a share updated in one bulk second."""
    created = sorted(_at(rng) for _ in range(n))
    at, share = BULK.get(bulk or "", (None, 0.0))
    pairs = []
    for moment in created:
        updated = min(moment + timedelta(seconds=rng.choice(
            (rng.randrange(600), rng.randrange(5 * 86400), rng.randrange(90 * 86400)))), END)
        if at is not None and moment < at and rng.random() < share:
            updated = at
        pairs.append((moment, updated))
    return pairs


def _money(value: float) -> Decimal:
    return Decimal(str(round(value, 2))).quantize(Decimal("0.01"))


def _reference_tables(shop: Shop) -> None:
    since = START - timedelta(days=400)
    shop.tables["order_states"] = [
        {"code": code, "label": label, "paid": paid, "updated_at": since}
        for code, label, paid in STATES]
    shop.tables["carriers"] = [{"id": cid, "name": name, "active": cid != 3, "created_at": since,
                                "updated_at": since + timedelta(days=cid)} for cid, name in CARRIERS]
    shop.tables["customer_groups"] = [{"id": gid, "name": name, "created_at": since,
                                       "updated_at": since} for gid, name in GROUPS]
    shop.tables["categories"] = [
        {"id": cid, "parent_id": parent, "name": name, "description": f"All {name.lower()}",
         "slug": slug, "active": True, "created_at": since, "updated_at": since}
        for cid, name, parent, slug in CATEGORIES]
    shop.tables["brands"] = [{"id": bid, "name": name, "active": True, "created_at": since,
                              "updated_at": since} for bid, name in BRANDS]


def _customers(shop: Shop, n: int) -> None:
    rng = _rng(shop.seed, "customers")
    customers, addresses = [], []
    for i, (created, updated) in enumerate(_times(rng, n, "customers")):
        cid = i + 1
        first, last = ODD_CUSTOMERS[i] if i < len(ODD_CUSTOMERS) else (
            rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES))
        email = BAD_EMAIL if last == "Email" else f"customer{cid}@example.org"
        customers.append({
            "id": cid, "email": email, "first_name": first, "last_name": last,
            "phone": f"+33 6 {rng.randrange(10**7, 10**8)}" if rng.random() < 0.6 else None,
            "newsletter": rng.random() < 0.4, "opt_in": rng.random() < 0.3, "active": True,
            "group_id": rng.choice(GROUPS)[0],
            "birth_date": (START - timedelta(days=rng.randrange(7000, 25000))).date()
            if rng.random() < 0.5 else None,
            "created_at": created, "updated_at": updated})
        city, postcode, country = rng.choice(CITIES)
        addresses.append({
            "id": 10 * cid, "customer_id": cid, "first_name": first, "last_name": last,
            "street": f"{rng.randrange(1, 120)} rue des Lilas", "street2": None,
            "zip": postcode, "city": city, "country": country, "phone": None,
            "company": "Nord SARL" if rng.random() < 0.1 else None, "updated_at": updated})
    shop.tables["customers"], shop.tables["addresses"] = customers, addresses


def _products(shop: Shop, n: int) -> None:
    rng = _rng(shop.seed, "products")
    products, variants, images = [], [], []
    for i, (created, updated) in enumerate(_times(rng, n, "products")):
        pid = 100 + i
        name = f"{rng.choice(basket.ADJECTIVES)} {rng.choice(NOUNS)}"
        price = Decimal("-5.00") if i == 2 else _money(rng.randrange(4, 90) + 0.9)
        products.append({
            "id": pid, "sku": f"SKU-{pid}", "name": name, "description": f"A {name.lower()}.",
            "price": price, "sale_price": _money(float(price) * 0.8) if i % 7 == 3 else None,
            "stock": rng.randrange(0, 200), "active": i % 11 != 5,
            "category_id": rng.choice(CATEGORIES)[0], "brand_id": rng.choice(BRANDS)[0],
            "slug": f"{name.lower().replace(' ', '-')}-{pid}", "created_at": created,
            "updated_at": updated})
        if i % 3 == 0:
            for j, color in enumerate(COLORS[: 2 + i % 3]):
                variants.append({
                    "id": 1000 * pid + j, "product_id": pid, "sku": f"SKU-{pid}-{j}",
                    "name": f"{name} - {color}", "price": price, "stock": rng.randrange(0, 50),
                    "is_default": j == 0, "updated_at": updated})
        images.append({"id": 5000 + i, "product_id": pid, "is_cover": True,
                       "url": f"https://cdn.shop.example/p/{pid}.jpg", "updated_at": updated})
    shop.tables["products"], shop.tables["variants"] = products, variants
    shop.tables["product_images"] = images


def _coupons(shop: Shop) -> None:
    rng = _rng(shop.seed, "coupons")
    shop.tables["coupons"] = [
        {"id": 70 + i, "code": code, "kind": kind, "value": Decimal(value),
         "min_amount": Decimal(minimum), "starts_at": created,
         "ends_at": created + timedelta(days=90) if i % 2 else None, "active": i != 3,
         "times_used": rng.randrange(0, 40), "created_at": created, "updated_at": updated}
        for i, ((code, kind, value, minimum), (created, updated))
        in enumerate(zip(COUPONS, _times(rng, len(COUPONS), None), strict=True))]


def _lines(rng: random.Random, shop: Shop, parent: str, parent_id: int, first_id: int,
           negative: bool) -> list[Row]:
    products = shop.tables["products"][3:] or shop.tables["products"]
    lines = []
    for j in range(rng.choice((1, 1, 2, 3, 4)) if products else 0):
        product = rng.choice(products)
        unit = Decimal("-3.00") if negative and j == 0 else product["price"]
        lines.append({"id": first_id + j, parent: parent_id, "product_id": product["id"],
                      "variant_id": None, "qty": rng.randrange(1, 4), "unit_price": unit,
                      "unit_price_excl": _money(float(unit) / 1.2)})
    return lines


def _orders(shop: Shop, n: int) -> None:
    rng = _rng(shop.seed, "orders")
    customers = shop.tables["customers"]
    orders, items = [], []
    for i, (created, updated) in enumerate(_times(rng, n, "orders")):
        oid = FIRST_ORDER_ID + i
        if i in (5, 6):  # changed during the DST fall-back hour, in this order of local time
            updated = DST_FOLD + timedelta(minutes=20 + 30 * (i - 5))
            created = min(created, updated)
        customer = rng.choice(customers) if customers and i != 1 else None
        lines = _lines(rng, shop, "order_id", oid, 10 * oid, negative=i == 2)
        total = sum(line["unit_price"] * line["qty"] for line in lines) or Decimal("0.00")
        shipping = Decimal("4.90") if rng.random() < 0.7 else Decimal("0.00")
        coupon = rng.choice(COUPONS)[0] if rng.random() < 0.2 else None
        code = rng.choices([s[0] for s in STATES], STATE_WEIGHTS)[0]
        orders.append({
            "id": oid, "number": f"SO-{oid}", "state": code,
            "customer_id": customer["id"] if customer else None,
            "email": customer["email"] if customer else "guest@example.net",
            "cart_id": 9000 + i, "currency": "EUR", "total": _money(float(total + shipping)),
            "total_tax": _money(float(total) / 6), "shipping": _money(float(shipping) / 1.2),
            "shipping_tax": shipping - _money(float(shipping) / 1.2),
            "carrier_id": rng.choice(CARRIERS)[0], "coupon_code": coupon,
            "discount": Decimal("5.00") if coupon else None, "created_at": created,
            "updated_at": updated})
        items += lines
    shop.tables["orders"], shop.tables["order_items"] = orders, items


def _carts(shop: Shop, n: int) -> None:
    rng = _rng(shop.seed, "carts")
    customers = shop.tables["customers"]
    carts, items = [], []
    for i, (created, updated) in enumerate(_times(rng, n, None)):
        cart_id = 20000 + i
        customer = rng.choice(customers) if customers and rng.random() < 0.7 else None
        lines = _lines(rng, shop, "cart_id", cart_id, 10 * cart_id, negative=False)
        carts.append({
            "id": cart_id, "customer_id": customer["id"] if customer else None,
            "email": customer["email"] if customer else None, "currency": "EUR",
            "total": sum((line["unit_price"] * line["qty"] for line in lines), Decimal("0.00")),
            "converted": rng.random() < 0.3, "created_at": created, "updated_at": updated})
        items += lines
    shop.tables["carts"], shop.tables["cart_items"] = carts, items


def generate(seed: int = 0, *, orders: int = 200, customers: int = 50,
             products: int = 30) -> Shop:
    """The shop of ``seed`` with that many orders, customers and products (and a cart for
    every fourth order)."""
    shop = Shop(seed)
    _reference_tables(shop)
    _customers(shop, customers)
    _products(shop, products)
    _coupons(shop)
    _carts(shop, orders // 4)
    _orders(shop, orders)
    return shop
