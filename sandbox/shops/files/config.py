"""The ``connection`` of a source reading the fake drop folder: every stream, mapped.

The worked example of the files platform's configuration (see
``connectors/sources/files/README.md``): CSV columns by name, JSON Lines paths into nested
objects (``customer.email``), lines from a JSON list column, links from templates.
"""

from __future__ import annotations

from typing import Any

TIMEZONE = "Europe/Paris"
SHOP_URL = "https://shop.example"
LINE_COLUMNS = {"product_id": "product_id", "product_variation_id": "variant_id",
                "quantity": "qty", "price": "unit_price", "price_without_tax": "unit_price_excl"}

STREAMS: dict[str, dict[str, Any]] = {
    "statuses": {"key": "code", "cursor": "updated_at", "columns": {
        "status_id": "code", "name": "label", "created_at": "updated_at"},
        "constants": {"is_deleted": False}},
    "carriers": {"key": "id", "cursor": "updated_at", "columns": {
        "carrier_id": "id", "name": "name", "is_active": "active", "created_at": "created_at"}},
    "groups": {"key": "id", "cursor": "updated_at", "columns": {
        "group_id": "id", "name": "name", "created_at": "created_at"}},
    "categories": {"key": "id", "cursor": "updated_at", "columns": {
        "category_id": "id", "name": "name", "description": "description",
        "parent_category_id": "parent_id", "is_active": "active", "created_at": "created_at"},
        "templates": {"link": SHOP_URL + "/c/{slug}"}},
    "manufacturers": {"key": "id", "cursor": "updated_at", "columns": {
        "manufacturer_id": "id", "name": "name", "is_active": "active",
        "created_at": "created_at"}},
    "customers": {"key": "id", "cursor": "updated_at", "pattern": "customers-*.csv",
                  "columns": {
        "customer_id": "id", "email": "email", "first_name": "first_name",
        "last_name": "last_name", "phone_number": "phone", "is_opt_in": "opt_in",
        "is_newsletter_subscribed": "newsletter", "is_active": "active",
        "birth_date": "birth_date", "group_ids": "group_id", "created_at": "created_at"}},
    "addresses": {"key": "id", "cursor": "updated_at", "columns": {
        "address_id": "id", "customer_id": "customer_id", "first_name": "first_name",
        "last_name": "last_name", "address_line_1": "street", "address_line_2": "street2",
        "postal_code": "zip", "city": "city", "country": "country", "primary_phone": "phone",
        "company": "company"}, "constants": {"is_active": True}},
    "products": {"key": "id", "cursor": "updated_at", "columns": {
        "product_id": "id", "name": "name", "description": "description", "price": "price",
        "price_discount": "sale_price", "quantity_remaining": "stock", "is_active": "active",
        "reference": "sku", "category_ids": "category_id", "manufacturer_id": "brand_id",
        "created_at": "created_at"}, "templates": {"link": SHOP_URL + "/p/{slug}"}},
    "variations": {"key": "id", "cursor": "updated_at", "columns": {
        "variation_id": "id", "product_id": "product_id", "name": "name", "price": "price",
        "quantity_remaining": "stock", "is_default": "is_default", "reference": "sku"},
        "templates": {"link": SHOP_URL + "/p/{product_id}?variant={id}"}},
    "images": {"key": "id", "cursor": "updated_at", "columns": {
        "image_id": "id", "product_id": "product_id", "url": "url", "is_default": "is_cover"}},
    "vouchers": {"key": "id", "cursor": "updated_at", "columns": {
        "voucher_id": "id", "code": "code", "type_voucher": "type", "value": "value",
        "minimum_amount": "min_amount", "started_at": "starts_at", "ended_at": "ends_at",
        "is_active": "active", "is_used": "used", "created_at": "created_at"},
        "constants": {"reduction_tax": False}, "templates": {"description": "Coupon {code}"}},
    "carts": {"key": "id", "cursor": "updated_at", "columns": {
        "cart_id": "id", "customer_id": "customer_id", "email": "email",
        "currency": "currency", "amount": "total", "is_converted": "converted",
        "created_at": "created_at"},
        "lines": {"column": "items", "columns": LINE_COLUMNS}},
    "orders": {"key": "id", "cursor": "updated_at", "pattern": "orders-*.jsonl", "columns": {
        "order_id": "id", "reference": "number", "status_id": "state",
        "customer.customer_id": "customer.id", "customer.email": "customer.email",
        "customer.created_at": "customer.since", "cart_id": "cart_id", "amount": "total",
        "amount_without_tax": "total_excl", "shipping_costs": "shipping_incl",
        "shipping_costs_without_tax": "shipping", "currency": "currency",
        "is_confirmed": "paid", "carrier_id": "carrier_id", "voucher_used": "coupon",
        "voucher_value": "discount", "created_at": "created_at"},
        "lines": {"column": "items", "columns": LINE_COLUMNS}},
}


def connection(path: str) -> dict[str, Any]:
    """The ``connection`` of a source on the fake drop folder at ``path``."""
    return {"path": path, "options": {"timezone": TIMEZONE}, "streams": STREAMS}
