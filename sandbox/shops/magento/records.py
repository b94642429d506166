"""The JSON records the fake serves, built from a row and the seed when they are asked for.

As Magento's REST API answers them: numbers are JSON numbers (money as floats), except in
``custom_attributes`` where every value is a string; datetimes are ``YYYY-MM-DD HH:MM:SS`` in
UTC without an offset whatever the store's timezone; an order's ``discount_amount`` is
negative while its items' are positive; a configurable product sold appears as a parent item
and a child item (``parent_item_id``, and the whole parent again under ``parent_item``); null
fields are left out, as Magento's output processor does.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sandbox.shops import basket
from sandbox.shops.magento import names
from sandbox.shops.magento.data import (
    PERSONAS,
    Row,
    Sellable,
    line_count,
    quote_id,
)
from sandbox.shops.people import slugify

if TYPE_CHECKING:
    from sandbox.shops.magento.store import Store

TAX_PERCENT = 19
SITE = "https://magento.example"
STORE_NAME = "Main Website\nMain Website Store\nDefault Store View"
Pick = tuple[Sellable, tuple[int, str, str, int] | None, int]


def utc_text(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S")


def money(cents: int) -> float:
    return round(cents / 100, 2)


def increment_id(order_id: int) -> str:
    return f"{order_id:09d}"


def _address(rng: random.Random, first: str, last: str) -> dict[str, Any]:
    city, postcode, country, region = rng.choice(names.CITIES)
    return {
        "city": city, "country_id": country, "firstname": first, "lastname": last,
        "postcode": postcode, "region": region,
        "street": [(f"{rng.choice(('Hauptstraße', 'Rue de la Paix', 'Main Street'))}"
                   f" {rng.randrange(1, 200)}")],
        "telephone": f"+49 30 {rng.randrange(1000000, 9999999)}",
    }


def _order_items(row: Row, picks: list[Pick], percent: int,
                 created: str) -> tuple[list[dict], Counter[str]]:
    """The order's item rows and its money totals in cents (subtotal, discount, tax, qty)."""
    items: list[dict[str, Any]] = []
    sums: Counter[str] = Counter()
    for index, (product, child, qty) in enumerate(picks):
        price = child[3] if child else product.price
        row_total = price * qty
        discount = row_total * percent // 100
        tax = round((row_total - discount) * TAX_PERCENT / 100)
        sums.update(subtotal=row_total, discount=discount, tax=tax, qty=qty)
        item_id = row.id * 10 + 2 * index
        common = {"order_id": row.id, "created_at": created, "updated_at": created,
                  "qty_ordered": float(qty), "qty_invoiced": 0.0, "qty_refunded": 0.0,
                  "qty_shipped": 0.0, "qty_canceled": 0.0, "store_id": 1, "is_virtual": 0,
                  "weight": 0.5, "tax_percent": float(TAX_PERCENT)}
        parent = {
            "item_id": item_id, **common, "product_id": product.id,
            "product_type": "configurable" if child else "simple",
            "sku": child[1] if child else product.label, "name": product.name,
            "price": money(price), "base_price": money(price), "original_price": money(price),
            "price_incl_tax": money(round(price * (100 + TAX_PERCENT) / 100)),
            "row_total": money(row_total), "base_row_total": money(row_total),
            "row_total_incl_tax": money(row_total + round(row_total * TAX_PERCENT / 100)),
            "tax_amount": money(tax), "discount_amount": money(discount),
            "discount_percent": float(percent),
        }
        items.append(parent)
        if child:
            items.append({
                "item_id": item_id + 1, **common, "parent_item_id": item_id,
                "product_id": child[0], "product_type": "simple", "sku": child[1],
                "name": child[2], "price": 0.0, "base_price": 0.0, "original_price": 0.0,
                "row_total": 0.0, "base_row_total": 0.0, "tax_amount": 0.0,
                "discount_amount": 0.0, "discount_percent": 0.0, "parent_item": parent,
            })
    return items, sums


def order(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "orders", row.id)
    picks = basket.pick(rng, store.sellable, line_count(rng))
    first, last, email = PERSONAS.buyer(store.seed, row.customer, rng, str(row.id))
    coupon = names.COUPONS[rng.randrange(len(names.COUPONS))] if rng.random() < 0.15 else None
    created, updated = utc_text(row.created), utc_text(row.updated)
    items, sums = _order_items(row, picks, coupon[1] if coupon else 0, created)
    method, description, ship_price = rng.choice(names.SHIPPING)
    if not picks or sums["subtotal"] - sums["discount"] >= 10000:
        ship_price = 0
    ship_tax = round(ship_price * TAX_PERCENT / 100)
    tax = sums["tax"] + ship_tax
    grand = sums["subtotal"] - sums["discount"] + tax + ship_price
    paid = grand if row.state in ("processing", "complete", "closed") else 0
    pay_code, pay_title = rng.choice(names.PAYMENTS)
    address = {**_address(rng, first, last), "email": email, "address_type": "billing",
               "entity_id": row.id * 2, "parent_id": row.id}
    record: dict[str, Any] = {
        "entity_id": row.id, "increment_id": increment_id(row.id), "state": row.state,
        "status": row.status, "created_at": created, "updated_at": updated,
        "store_id": 1, "store_name": STORE_NAME, "quote_id": quote_id(row.id),
        "customer_is_guest": 0 if row.customer else 1, "customer_email": email,
        "customer_firstname": first, "customer_lastname": last,
        "customer_group_id": 1 if row.customer else 0, "customer_note_notify": 1,
        "order_currency_code": store.currency, "base_currency_code": store.currency,
        "global_currency_code": store.currency, "store_currency_code": store.currency,
        "subtotal": money(sums["subtotal"]), "base_subtotal": money(sums["subtotal"]),
        "subtotal_incl_tax": money(sums["subtotal"] + round(sums["subtotal"] * TAX_PERCENT / 100)),
        "discount_amount": -money(sums["discount"]), "base_discount_amount": -money(sums["discount"]),
        "tax_amount": money(tax), "base_tax_amount": money(tax),
        "shipping_amount": money(ship_price), "base_shipping_amount": money(ship_price),
        "shipping_tax_amount": money(ship_tax), "shipping_incl_tax": money(ship_price + ship_tax),
        "shipping_description": description,
        "grand_total": money(grand), "base_grand_total": money(grand),
        "total_paid": money(paid), "total_due": money(grand - paid),
        "total_invoiced": money(paid), "total_refunded": money(grand if row.state == "closed" else 0),
        "total_qty_ordered": float(sums["qty"]), "total_item_count": len(picks),
        "weight": 0.5 * sums["qty"], "remote_ip": f"203.0.113.{rng.randrange(1, 255)}",
        "protect_code": f"{rng.getrandbits(24):06x}",
        "items": items, "billing_address": address,
        "payment": {"method": pay_code, "additional_information": [pay_title],
                    "amount_ordered": money(grand), "base_amount_ordered": money(grand),
                    "entity_id": row.id, "parent_id": row.id},
        "status_histories": [],
        "extension_attributes": {"shipping_assignments": [{"shipping": {
            "address": {**address, "address_type": "shipping", "entity_id": row.id * 2 + 1},
            "method": method,
            "total": {"shipping_amount": money(ship_price), "shipping_incl_tax": money(ship_price + ship_tax),
                      "shipping_tax_amount": money(ship_tax)}},
            "items": []}]} if picks else {},
    }
    if row.customer:
        record["customer_id"] = row.customer
    if coupon:
        record["coupon_code"] = coupon[0]
        record["discount_description"] = coupon[0]
    return record


def cart(store: Store, row: Row) -> dict[str, Any]:
    if row.order:
        rng = PERSONAS.rng(store.seed, "orders", row.order)
        picks = basket.pick(rng, store.sellable, line_count(rng))
        first, last, email = PERSONAS.buyer(store.seed, row.customer, rng, str(row.order))
    else:
        rng = PERSONAS.rng(store.seed, "carts", row.id)
        picks = basket.pick(rng, store.sellable, row.count)
        first, last, email = PERSONAS.buyer(store.seed, row.customer, rng, f"cart{row.id}")
    items = [{"item_id": row.id * 10 + i, "sku": child[1] if child else product.label,
              "qty": float(qty), "name": product.name,
              "price": money(child[3] if child else product.price),
              "product_type": "configurable" if child else "simple", "quote_id": str(row.id)}
             for i, (product, child, qty) in enumerate(picks)]
    if row.customer:
        created = store.tables["customers"].rows.get(row.customer)
        customer: dict[str, Any] = {
            "id": row.customer, "group_id": 1, "email": email, "firstname": first,
            "lastname": last, "store_id": 1, "website_id": 1, "addresses": [],
            "disable_auto_group_change": 0, "created_in": "Default Store View",
        }
        if created is not None:
            customer["created_at"] = utc_text(created.created)
            customer["updated_at"] = utc_text(created.updated)
    else:
        customer = {"email": None, "firstname": None, "lastname": None}
    billing: dict[str, Any] = {"id": row.id * 2, "region": None, "region_id": None,
                               "country_id": None, "street": [""], "telephone": None,
                               "postcode": None, "city": None, "firstname": None,
                               "lastname": None, "email": None, "same_as_billing": 0,
                               "save_in_address_book": 0}
    if row.customer or row.order or rng.random() < 0.5:  # reached the checkout's address step
        billing.update({**_address(rng, first, last), "email": email})
    currency = store.currency
    record: dict[str, Any] = {
        "id": row.id, "created_at": utc_text(row.created), "updated_at": utc_text(row.updated),
        "is_active": row.active, "is_virtual": False, "items": items,
        "items_count": len(items), "items_qty": float(sum(q for _, _, q in picks)),
        "customer": customer, "billing_address": billing, "orig_order_id": 0,
        "currency": {"global_currency_code": currency, "base_currency_code": currency,
                     "store_currency_code": currency, "quote_currency_code": currency,
                     "store_to_base_rate": 0, "store_to_quote_rate": 0,
                     "base_to_global_rate": 1, "base_to_quote_rate": 1},
        "customer_is_guest": not row.customer, "customer_note_notify": True,
        "customer_tax_class_id": 3, "store_id": 1,
        "extension_attributes": {"shipping_assignments": []},
    }
    if row.order:
        record["reserved_order_id"] = increment_id(row.order)
    return record


def customer(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "customers", row.id)
    first, last, _ = PERSONAS.customer(store.seed, row.id)
    record: dict[str, Any] = {
        "id": row.id, "group_id": rng.choice((1, 1, 1, 2, 3)),
        "created_at": utc_text(row.created), "updated_at": utc_text(row.updated),
        "created_in": "Default Store View", "email": row.sku, "firstname": first,
        "lastname": last, "gender": rng.choice((0, 1, 2)), "store_id": 1, "website_id": 1,
        "addresses": [], "disable_auto_group_change": 0,
        "extension_attributes": {"is_subscribed": rng.random() < 0.3},
    }
    if rng.random() < 0.6:
        record["dob"] = f"{rng.randrange(1950, 2005)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    if rng.random() < 0.8:  # has been through a checkout: one or two addresses
        for k in range(rng.choice((1, 1, 2))):
            record["addresses"].append({
                "id": row.id * 10 + k, "customer_id": row.id,
                **{key: value for key, value in _address(rng, first, last).items() if key != "region"},
                "region": {"region_code": None, "region": None, "region_id": 0}, "region_id": 0,
                **({"default_billing": True, "default_shipping": True} if k == 0 else {}),
            })
        record["default_billing"] = record["default_shipping"] = str(row.id * 10)
    return record


def product(store: Store, row: Row) -> dict[str, Any]:
    rng = PERSONAS.rng(store.seed, "products", row.id)
    parent = store.tables["products"].rows.get(row.parent) if row.parent else None
    base = parent or row
    category = next((cid for i, (n, cid) in names.ODD_PRODUCTS.items() if n == base.name),
                    names.NOUNS.get(base.name.partition(" ")[2], 2))
    slug = f"{slugify(row.name)}-{row.id}"
    children = [store.tables["products"].rows[c] for c in store.children.get(row.id, ())]
    qty = 0 if row.kind == "configurable" else rng.choice((0, 3, 25, 140, 1000))
    extension: dict[str, Any] = {
        "website_ids": [1],
        "category_links": [{"position": 0, "category_id": str(category)}],
        "stock_item": {"item_id": row.id, "product_id": row.id, "stock_id": 1, "qty": float(qty),
                       "is_in_stock": qty > 0 or row.kind == "configurable",
                       "is_qty_decimal": False, "manage_stock": True, "min_sale_qty": 1.0,
                       "max_sale_qty": 10000.0, "backorders": 0, "low_stock_date": None},
    }
    if row.kind == "configurable":
        extension["configurable_product_links"] = [c.id for c in children]
        extension["configurable_product_options"] = [
            {"id": row.id * 10 + k, "attribute_id": str(93 + k), "label": label,
             "position": k, "product_id": row.id,
             "values": [{"value_index": 10 + v} for v in range(len(children))]}
            for k, label in enumerate(("Color", "Size"))]
    attributes = [
        {"attribute_code": "description", "value": f"<p>{row.name}</p>"},
        {"attribute_code": "url_key", "value": slug},
        {"attribute_code": "category_ids", "value": [str(category)]},
        {"attribute_code": "tax_class_id", "value": "2"},
        {"attribute_code": "options_container", "value": "container2"},
    ]
    if row.kind == "simple" and not row.parent and rng.random() < 0.15:
        attributes.append({"attribute_code": "special_price",
                           "value": f"{row.amount * 8 // 10 / 100:.6f}"})
    if rng.random() < 0.5:
        attributes.append({"attribute_code": "short_description", "value": f"{row.name}."})
    images = [] if rng.random() < 0.2 else [{
        "id": row.id * 3, "media_type": "image", "label": None, "position": 1,
        "disabled": False, "types": ["image", "small_image", "thumbnail"],
        "file": f"/{slug[0]}/{slug[1:2] or slug[0]}/{slug}.jpg"}]
    record: dict[str, Any] = {
        "id": row.id, "sku": row.sku, "name": row.name, "attribute_set_id": 4,
        "price": money(row.amount), "status": 1 if row.active else 2,
        "visibility": 1 if row.parent else 4, "type_id": row.kind,
        "created_at": utc_text(row.created), "updated_at": utc_text(row.updated),
        "extension_attributes": extension, "product_links": [], "options": [],
        "media_gallery_entries": images, "tier_prices": [], "custom_attributes": attributes,
    }
    if row.kind != "virtual":
        record["weight"] = 0.5
    return record


def category(store: Store, row: Row) -> dict[str, Any]:
    table = store.tables["categories"].rows
    path, at = [row.id], row
    # up to the root; a loop the control API made (a category its own ancestor) ends it
    while at.parent and at.parent in table and at.parent not in path:
        at = table[at.parent]
        path.append(at.id)
    children = sorted(r.id for r in table.values() if r.parent == row.id)
    slug = slugify(row.name)
    return {
        "id": row.id, "parent_id": row.parent, "name": row.name, "is_active": row.active,
        "position": row.id, "level": len(path) - 1, "children": ",".join(map(str, children)),
        "created_at": utc_text(row.created), "updated_at": utc_text(row.updated),
        "path": "/".join(map(str, reversed(path))), "available_sort_by": [],
        "include_in_menu": row.id > 2,
        "custom_attributes": [{"attribute_code": "url_key", "value": slug},
                              {"attribute_code": "url_path", "value": slug},
                              {"attribute_code": "is_anchor", "value": "1"},
                              {"attribute_code": "display_mode", "value": "PRODUCTS"}],
    }


BUILDERS = {"orders": order, "carts": cart, "customers": customer, "products": product,
            "categories": category}
