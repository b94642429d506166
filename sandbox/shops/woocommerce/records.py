"""The JSON records the fake serves, built from a row and the seed when they are asked for.

Money is a 2-decimal string everywhere except an order line's ``price``, which WooCommerce
computes as total / quantity and serializes as a JSON number. Dates come in pairs: the
``date_*`` field is the site's local time and ``date_*_gmt`` is UTC, both without a zone.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sandbox.shops import basket
from sandbox.shops.basket import money
from sandbox.shops.people import ascii_part, slugify
from sandbox.shops.woocommerce import names
from sandbox.shops.woocommerce.data import (
    GUEST_EMAIL_ONLY_ORDER,
    NEGATIVE_LINE_ORDER,
    PERSONAS,
    Row,
)

if TYPE_CHECKING:
    from sandbox.shops.woocommerce.store import Store

WC_VERSION = "9.8.5"
SITE = "https://shop.example"
_CATEGORY = {slug: (cid, name) for cid, name, _, slug in names.CATEGORIES}
_PAYMENTS = (("stripe", "Credit card (Stripe)"), ("paypal", "PayPal"),
             ("bacs", "Direct bank transfer"), ("cod", "Cash on delivery"))


def _dates(store: Store, **epochs: int | None) -> dict[str, Any]:
    """Each date twice, as WooCommerce writes it: the site's local time, then ``…_gmt``."""
    out: dict[str, Any] = {}
    for name, epoch in epochs.items():
        out[name], out[f"{name}_gmt"] = store.local_text(epoch), store.gmt_text(epoch)
    return out


def product_category(row: Row) -> str:
    """The category slug of a product (generated products only; others are uncategorized)."""
    for odd_name, slug in names.ODD_PRODUCTS.values():
        if row.name == odd_name:
            return slug
    return names.NOUNS.get(row.name.partition(" ")[2], "uncategorized")


def _addresses(rng: Any, first: str, last: str,
               email: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The billing address (with the email) and the shipping address (the same, without)."""
    city, postcode, country = rng.choice(names.CITIES)
    address = {
        "first_name": first, "last_name": last, "company": "",
        "address_1": f"{rng.randrange(1, 200)} {rng.choice(('rue', 'Strasse', 'via'))} "
                     f"{rng.choice(names.LAST_NAMES)}",
        "address_2": "", "city": city, "state": "", "postcode": postcode, "country": country,
        "phone": f"+33 6 {rng.randrange(10, 99)} {rng.randrange(10, 99)} {rng.randrange(10, 99)}",
    }
    return {**address, "email": email}, address


#: an order's line before its totals: (product id, variation id, name, unit price in cents,
#: quantity, parent product's name for a variation)
Pick = tuple[int, int, str, int, int, str | None]


def _buyer(store: Store, row: Row, rng: random.Random) -> tuple[str, str, str]:
    if row.id == GUEST_EMAIL_ONLY_ORDER and not row.customer:
        return "", "", f"guest.{row.id}@example.net"
    return PERSONAS.buyer(store.seed, row.customer, rng, row.id)


def _picks(store: Store, row: Row, rng: random.Random) -> list[Pick]:
    picks: list[Pick] = []
    if row.id == NEGATIVE_LINE_ORDER and store.negative is not None:
        neg = store.negative
        picks.append((neg.id, 0, neg.name, neg.price, 1, None))
    count = rng.choice(basket.LINE_COUNTS) if store.sellable else 0
    for product, variation, qty in basket.pick(rng, store.sellable, count):
        vid, vname, price = variation or (0, product.name, product.price)
        picks.append((product.id, vid, vname, price, qty, product.name if vid else None))
    return picks


def _line_items(picks: list[Pick], discount: int, ids: Iterator[int]) -> tuple[list[dict], int]:
    """The order's line items, the discount taken off them in order, and their tax."""
    lines, cart_tax = [], 0
    offs = basket.spread(discount, (price * qty for _, _, _, price, qty, _ in picks))
    for (pid, vid, lname, price, qty, parent_name), off in zip(picks, offs, strict=True):
        line_sub = price * qty
        total = line_sub - off
        tax, sub_tax = round(total * 0.2), round(line_sub * 0.2)
        cart_tax += tax
        line = {
            "id": next(ids), "name": lname, "product_id": pid, "variation_id": vid,
            "quantity": qty, "tax_class": "", "subtotal": money(line_sub),
            "subtotal_tax": money(sub_tax), "total": money(total), "total_tax": money(tax),
            "taxes": [{"id": 1, "total": money(tax), "subtotal": money(sub_tax)}],
            "meta_data": [], "sku": f"SKU-{vid or pid:05d}",
            "price": total / qty / 100, "image": {"id": "", "src": ""},
        }
        if parent_name is not None:
            line["parent_name"] = parent_name
        lines.append(line)
    return lines, cart_tax


def order(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "orders", row.id)
    first, last, email = _buyer(store, row, rng)
    billing, shipping = _addresses(rng, first, last, email)
    picks = _picks(store, row, rng)
    subtotal = sum(price * qty for _, _, _, price, qty, _ in picks)
    coupon, discount = basket.draw_coupon(rng, subtotal, names.COUPONS)
    item_seq = iter(range(row.id * 10, row.id * 10 + 10))
    lines, cart_tax = _line_items(picks, discount, item_seq)
    items_total = subtotal - discount
    ship = basket.shipping(items_total, bool(picks))
    ship_tax = round(ship * 0.2)
    total = items_total + cart_tax + ship + ship_tax
    paid = min(row.created + rng.randrange(20, 900), max(row.modified, row.created))
    is_paid = row.status in ("processing", "completed", "refunded")
    method, title = rng.choice(_PAYMENTS)
    note = ("Geste commercial 🎁 — avoir de 5 €" if row.id == NEGATIVE_LINE_ORDER
            else rng.choice(("", "", "", "", "Livraison après 18h 🚚", "الرجاء الاتصال قبل التسليم")))
    return {
        "id": row.id, "parent_id": 0, "status": row.status, "currency": store.currency,
        "version": WC_VERSION, "prices_include_tax": False,
        **_dates(store, date_created=row.created, date_modified=row.modified),
        "discount_total": money(discount), "discount_tax": money(round(discount * 0.2)),
        "shipping_total": money(ship), "shipping_tax": money(ship_tax),
        "cart_tax": money(cart_tax), "total": money(total), "total_tax": money(cart_tax + ship_tax),
        "customer_id": row.customer, "order_key": f"wc_order_{rng.getrandbits(48):012x}",
        "billing": billing, "shipping": shipping,
        "payment_method": method, "payment_method_title": title,
        "transaction_id": f"txn_{rng.getrandbits(40):010x}" if is_paid and method != "cod" else "",
        "customer_ip_address": f"203.0.113.{rng.randrange(1, 255)}",
        "customer_user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "created_via": "checkout",
        "customer_note": note,
        **_dates(store, date_completed=row.modified if row.status == "completed" else None,
                 date_paid=paid if is_paid else None),
        "cart_hash": f"{rng.getrandbits(128):032x}", "number": str(row.id), "meta_data": [],
        "line_items": lines,
        "tax_lines": [{"id": next(item_seq), "rate_code": "FR-TVA-1", "rate_id": 1,
                       "label": "TVA", "compound": False, "tax_total": money(cart_tax),
                       "shipping_tax_total": money(ship_tax), "rate_percent": 20,
                       "meta_data": []}] if picks else [],
        "shipping_lines": [{"id": next(item_seq), "method_title": "Colissimo",
                            "method_id": "flat_rate", "instance_id": "1", "total": money(ship),
                            "total_tax": money(ship_tax), "taxes": [], "meta_data": []}]
        if picks else [],
        "fee_lines": [],
        "coupon_lines": [{"id": next(item_seq), "code": coupon[0], "discount": money(discount),
                          "discount_tax": money(round(discount * 0.2)), "meta_data": []}]
        if coupon else [],
        "refunds": [{"id": row.id * 10 + 9, "reason": "", "total": money(-total)}]
        if row.status == "refunded" else [],
        "currency_symbol": "€", "payment_url": f"{SITE}/checkout/order-pay/{row.id}/",
        "is_editable": row.status in ("pending", "on-hold", "checkout-draft"),
        "needs_payment": row.status in ("pending", "failed"),
        "needs_processing": True,
    }


def product(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "products", row.id)
    cat_id, cat_name = _CATEGORY[product_category(row)]
    slug = slugify(row.name)
    children = [store.tables["variations"].rows[v] for v in store.children.get(row.id, ())]
    sale = row.kind == "simple" and row.amount > 0 and rng.random() < 0.1
    if row.kind == "grouped":
        price = regular = ""
    elif row.kind == "variable":
        price, regular = (money(min(c.amount for c in children)) if children else ""), ""
    else:
        regular = money(row.amount)
        price = money(row.amount * 8 // 10) if sale else regular
    stock = rng.choice((None, None, 0, 3, 25, 140))
    option_names = [c.kind.split("/") for c in children]
    return {
        "id": row.id, "name": row.name, "slug": slug, "permalink": f"{SITE}/product/{slug}/",
        **_dates(store, date_created=row.created, date_modified=row.modified),
        "type": row.kind, "status": row.status, "featured": rng.random() < 0.1,
        "catalog_visibility": "visible", "description": f"<p>{row.name}</p>",
        "short_description": "", "sku": "" if rng.random() < 0.1 else f"SKU-{row.id:05d}",
        "price": price, "regular_price": regular,
        "sale_price": money(row.amount * 8 // 10) if sale else "",
        "date_on_sale_from": None, "date_on_sale_from_gmt": None,
        "date_on_sale_to": None, "date_on_sale_to_gmt": None,
        "on_sale": sale, "purchasable": row.status == "publish" and price != "",
        "total_sales": rng.randrange(0, 500), "virtual": row.amount < 0,
        "downloadable": False, "downloads": [], "download_limit": -1, "download_expiry": -1,
        "external_url": f"https://partner.example/p/{row.id}" if row.kind == "external" else "",
        "button_text": "Buy at our partner" if row.kind == "external" else "",
        "tax_status": "taxable", "tax_class": "", "manage_stock": stock is not None,
        "stock_quantity": stock,
        "stock_status": "outofstock" if stock == 0 else "instock",
        "backorders": "no", "backorders_allowed": False, "backordered": False,
        "sold_individually": False, "weight": f"{rng.randrange(1, 30) / 10}",
        "dimensions": {"length": "", "width": "", "height": ""},
        "shipping_required": row.amount >= 0, "shipping_taxable": True,
        "shipping_class": "", "shipping_class_id": 0, "reviews_allowed": True,
        "average_rating": "0.00", "rating_count": 0, "related_ids": [], "upsell_ids": [],
        "cross_sell_ids": [], "parent_id": 0, "purchase_note": "",
        "categories": [{"id": cat_id, "name": cat_name, "slug": product_category(row)}],
        "tags": [], "images": [],
        "attributes": [
            {"id": 0, "name": name, "position": k, "visible": True, "variation": True,
             "options": sorted({o[k] for o in option_names if len(o) > k})}
            for k, name in enumerate(("Color", "Size")) if row.kind == "variable"],
        "default_attributes": [], "variations": [c.id for c in children],
        "grouped_products": [s.id for s in store.sellable[:2]] if row.kind == "grouped" else [],
        "menu_order": 0, "meta_data": [],
    }


def variation(store: Store, row: Row) -> dict[str, Any]:
    color, _, size = row.kind.partition("/")
    rng = PERSONAS.rng(store.seed, "variations", row.id)
    stock = rng.choice((None, 0, 7, 40))
    return {
        "id": row.id, "type": "variation", "parent_id": row.parent, "name": row.name,
        **_dates(store, date_created=row.created, date_modified=row.modified),
        "description": "", "permalink": f"{SITE}/?p={row.parent}&attribute_color={color}",
        "sku": f"SKU-{row.id:05d}", "price": money(row.amount),
        "regular_price": money(row.amount), "sale_price": "", "on_sale": False,
        "status": row.status, "purchasable": row.status == "publish", "virtual": False,
        "downloadable": False, "tax_status": "taxable", "tax_class": "",
        "manage_stock": stock is not None, "stock_quantity": stock,
        "stock_status": "outofstock" if stock == 0 else "instock", "backorders": "no",
        "weight": "", "dimensions": {"length": "", "width": "", "height": ""},
        "image": None,
        "attributes": [{"id": 0, "name": "Color", "option": color},
                       {"id": 0, "name": "Size", "option": size}],
        "menu_order": 0, "meta_data": [],
    }


def customer(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "customers", row.id)
    if row.kind == "administrator":
        first, last, email = "Shop", "Owner", "owner@shop.example"
    else:
        first, last, email = PERSONAS.customer(store.seed, row.id)
    billing, shipping = _addresses(rng, first, last, email)
    return {
        "id": row.id, **_dates(store, date_created=row.created, date_modified=row.modified),
        "email": email, "first_name": first, "last_name": last, "role": row.kind,
        "username": f"{ascii_part(first, 'user')}{row.id}",
        "billing": billing, "shipping": shipping,
        "is_paying_customer": rng.random() < 0.7,
        "avatar_url": f"https://secure.gravatar.com/avatar/{rng.getrandbits(128):032x}?s=96&d=mm&r=g",
        "meta_data": [],
    }


def coupon(store: Store, row: Row) -> dict[str, Any]:
    note = next((n for code, _, _, n in names.COUPONS if code == row.name), "")
    amount = money(row.amount)
    return {
        "id": row.id, "code": row.name, "amount": amount, "status": row.status,
        **_dates(store, date_created=row.created, date_modified=row.modified),
        "discount_type": row.kind, "description": note,
        **_dates(store, date_expires=row.modified + 86400 if note == "expired" else None),
        "usage_count": row.id % 37, "individual_use": row.kind == "percent",
        "product_ids": [], "excluded_product_ids": [], "usage_limit": None,
        "usage_limit_per_user": 1 if row.name == "welcome10" else None,
        "limit_usage_to_x_items": None, "free_shipping": row.name == "freeship",
        "product_categories": [], "excluded_product_categories": [],
        "exclude_sale_items": False,
        "minimum_amount": "100.00" if row.name == "bigspender" else "0.00",
        "maximum_amount": "0.00", "email_restrictions": [], "used_by": [], "meta_data": [],
    }


def category(store: Store, row: Row) -> dict[str, Any]:
    return {
        "id": row.id, "name": row.name, "slug": row.kind or slugify(row.name),
        "parent": row.parent, "description": "", "display": "default", "image": None,
        "menu_order": 0, "count": store.category_counts.get(row.kind, 0),
    }


BUILDERS = {"orders": order, "products": product, "variations": variation,
            "customers": customer, "coupons": coupon, "categories": category}
