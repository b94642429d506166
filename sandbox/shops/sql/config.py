"""The ``connection`` of a source reading the fake shop database: every stream, mapped.

It doubles as the worked example of the SQL platform's configuration (see
``connectors/sources/sql/README.md``): plain tables where the columns fit, queries where a
value must be computed or joined (an order's tax-free total, its customer's signup time,
a voucher type in the API's words), lines from a child table.
"""

from __future__ import annotations

from typing import Any

TIMEZONE = "Europe/Paris"
SHOP_URL = "https://shop.example"

ORDERS_QUERY = """
SELECT o.id, o.number, o.state, o.email, o.cart_id, o.currency, o.total, o.shipping,
       ROUND(o.total - o.total_tax, 2) AS total_excl,
       ROUND(o.shipping + o.shipping_tax, 2) AS shipping_incl,
       o.carrier_id, o.coupon_code, o.discount, o.created_at, o.updated_at,
       COALESCE(CAST(o.customer_id AS TEXT), 'guest:' || o.email) AS customer_key,
       COALESCE(c.created_at, o.created_at) AS customer_since, s.paid
FROM orders o
LEFT JOIN customers c ON c.id = o.customer_id
LEFT JOIN order_states s ON s.code = o.state
"""

VOUCHERS_QUERY = """
SELECT c.*, CASE c.kind WHEN 'percent' THEN 'percentage_reduction'
                        WHEN 'shipping' THEN 'free_shipping'
                        ELSE 'amount_reduction' END AS type_voucher,
       CASE WHEN c.times_used > 0 THEN 1 ELSE 0 END AS used
FROM coupons c
"""

LINE_COLUMNS = {"product_id": "product_id", "product_variation_id": "variant_id",
                "quantity": "qty", "price": "unit_price", "price_without_tax": "unit_price_excl"}


def _stream(table: str, key: str = "id", **spec: Any) -> dict[str, Any]:
    return {"table": table, "key": key, "cursor": "updated_at", **spec}


STREAMS: dict[str, dict[str, Any]] = {
    "statuses": _stream("order_states", key="code", columns={
        "status_id": "code", "name": "label", "created_at": "updated_at"},
        constants={"is_deleted": False}),
    "carriers": _stream("carriers", columns={
        "carrier_id": "id", "name": "name", "is_active": "active", "created_at": "created_at"}),
    "groups": _stream("customer_groups", columns={
        "group_id": "id", "name": "name", "created_at": "created_at"}),
    "categories": _stream("categories", columns={
        "category_id": "id", "name": "name", "description": "description",
        "parent_category_id": "parent_id", "is_active": "active", "created_at": "created_at"},
        templates={"link": SHOP_URL + "/c/{slug}"}),
    "manufacturers": _stream("brands", columns={
        "manufacturer_id": "id", "name": "name", "is_active": "active",
        "created_at": "created_at"}),
    "customers": _stream("customers", columns={
        "customer_id": "id", "email": "email", "first_name": "first_name",
        "last_name": "last_name", "phone_number": "phone", "is_opt_in": "opt_in",
        "is_newsletter_subscribed": "newsletter", "is_active": "active",
        "birth_date": "birth_date", "group_ids": "group_id", "created_at": "created_at"}),
    "addresses": _stream("addresses", columns={
        "address_id": "id", "customer_id": "customer_id", "first_name": "first_name",
        "last_name": "last_name", "address_line_1": "street", "address_line_2": "street2",
        "postal_code": "zip", "city": "city", "country": "country", "primary_phone": "phone",
        "company": "company"}, constants={"is_active": True}),
    "products": _stream("products", columns={
        "product_id": "id", "name": "name", "description": "description", "price": "price",
        "price_discount": "sale_price", "quantity_remaining": "stock", "is_active": "active",
        "reference": "sku", "category_ids": "category_id", "manufacturer_id": "brand_id",
        "created_at": "created_at"}, templates={"link": SHOP_URL + "/p/{slug}"}),
    "variations": _stream("variants", columns={
        "variation_id": "id", "product_id": "product_id", "name": "name", "price": "price",
        "quantity_remaining": "stock", "is_default": "is_default", "reference": "sku"},
        templates={"link": SHOP_URL + "/p/{product_id}?variant={id}"}),
    "images": _stream("product_images", columns={
        "image_id": "id", "product_id": "product_id", "url": "url", "is_default": "is_cover"}),
    "vouchers": {"query": VOUCHERS_QUERY, "key": "id", "cursor": "updated_at", "columns": {
        "voucher_id": "id", "code": "code", "type_voucher": "type_voucher", "value": "value",
        "minimum_amount": "min_amount", "started_at": "starts_at", "ended_at": "ends_at",
        "is_active": "active", "is_used": "used", "created_at": "created_at"},
        "constants": {"reduction_tax": False}, "templates": {"description": "Coupon {code}"}},
    "carts": _stream("carts", columns={
        "cart_id": "id", "customer_id": "customer_id", "email": "email",
        "currency": "currency", "amount": "total", "is_converted": "converted",
        "created_at": "created_at"},
        lines={"table": "cart_items", "parent": "cart_id", "key": "id", "columns": LINE_COLUMNS}),
    "orders": {"query": ORDERS_QUERY, "key": "id", "cursor": "updated_at", "columns": {
        "order_id": "id", "reference": "number", "status_id": "state",
        "customer.customer_id": "customer_key", "customer.email": "email",
        "customer.created_at": "customer_since", "cart_id": "cart_id", "amount": "total",
        "amount_without_tax": "total_excl", "shipping_costs": "shipping_incl",
        "shipping_costs_without_tax": "shipping", "currency": "currency",
        "is_confirmed": "paid", "carrier_id": "carrier_id", "voucher_used": "coupon_code",
        "voucher_value": "discount", "created_at": "created_at"},
        "lines": {"table": "order_items", "parent": "order_id", "key": "id",
                  "columns": LINE_COLUMNS}},
}


def connection(url: str) -> dict[str, Any]:
    """The ``connection`` of a source on the fake database at ``url``."""
    return {"url": url, "options": {"timezone": TIMEZONE}, "streams": STREAMS}
