"""WooCommerce (REST v3) records to the API's target items.

Choices a reader should know:

- timestamps come from the ``*_gmt`` fields (naive UTC) and are sent as ISO 8601 ``Z``;
- money strings become numbers; a line's ``price`` is per unit with tax,
  ``price_without_tax`` per unit without;
- guest orders (``customer_id`` 0) carry the customer ``guest:<email>``; no customer item is
  made for them;
- a customer's billing and shipping addresses become addresses ``2·id`` and ``2·id + 1``;
- the carrier of an order is its first shipping line's method, sent as a carrier too;
- categories and order statuses have no dates in WooCommerce: they carry the Unix epoch,
  so that re-reading them changes nothing;
- a product is active when published; variations and images come with their product.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from connectors.marketing.references import stream_order
from connectors.sources.base import RawRecord
from pipelines.engine.mappings.base import Item, MappingContext, money, utc

EPOCH = "1970-01-01T00:00:00Z"
CONFIRMED_STATUSES = frozenset({"processing", "completed", "on-hold"})
_VOUCHER_TYPES = {
    "percent": "percentage_reduction",
    "fixed_cart": "amount_reduction",
    "fixed_product": "amount_reduction",
}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _or_none(value: Any) -> Any:
    return value if value not in ("", None, 0, "0") else None


def _times(record: RawRecord) -> tuple[str, str]:
    created = utc(record.get("date_created_gmt")) or EPOCH
    return created, utc(record.get("date_modified_gmt")) or created


class WooCommerceMapping:
    platform: ClassVar[str] = "woocommerce"
    #: stream -> the resources it feeds, listed by name: the order they sync in comes from
    #: the table of who refers to whom (connectors/marketing/references.py) alone
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = stream_order({
        "categories": ("categories",),
        "coupons": ("vouchers",),
        "customers": ("customers", "addresses"),
        "orders": ("carriers", "orders"),
        "products": ("products", "variations", "images"),
        "statuses": ("statuses",),
    })

    def map(
        self, stream: str, record: RawRecord, ctx: MappingContext
    ) -> Iterator[tuple[str, Item]]:
        yield from getattr(self, f"_{stream}")(record, ctx)

    def _customers(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        billing = record.get("billing") or {}
        customer_id = str(record["id"])
        yield "customers", {
            "customer_id": customer_id,
            "email": _text(record.get("email")),
            "first_name": _text(record.get("first_name")),
            "last_name": _text(record.get("last_name")),
            "is_opt_in": False,
            "is_newsletter_subscribed": False,
            "lang": ctx.lang,
            "is_active": True,
            "created_at": created,
            "updated_at": modified,
            "phone_number": _or_none(billing.get("phone")),
        }
        for offset, kind in ((0, "billing"), (1, "shipping")):
            address = record.get(kind) or {}
            if not address.get("address_1"):
                continue
            yield "addresses", {
                "address_id": 2 * int(record["id"]) + offset,
                "customer_id": customer_id,
                "first_name": _text(address.get("first_name")),
                "last_name": _text(address.get("last_name")),
                "address_line_1": _text(address.get("address_1")),
                "address_line_2": _or_none(address.get("address_2")),
                "postal_code": _text(address.get("postcode")),
                "city": _text(address.get("city")),
                "country": _text(address.get("country")),
                "company": _or_none(address.get("company")),
                "primary_phone": _or_none(address.get("phone")),
                "is_active": True,
            }

    def _orders(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        billing = record.get("billing") or {}
        email = _text(billing.get("email"))
        shipping_lines = record.get("shipping_lines") or []
        carrier = shipping_lines[0] if shipping_lines else None
        if carrier and carrier.get("method_id"):
            yield "carriers", {
                "carrier_id": str(carrier["method_id"]),
                "name": _text(carrier.get("method_title")) or str(carrier["method_id"]),
                "is_active": True,
                "created_at": EPOCH,
                "updated_at": EPOCH,
            }
        total, total_tax = money(record.get("total")), money(record.get("total_tax"))
        shipping, shipping_tax = money(record.get("shipping_total")), money(record.get("shipping_tax"))
        coupons = record.get("coupon_lines") or []
        customer_id = int(record.get("customer_id") or 0)
        yield "orders", {
            "order_id": str(record["id"]),
            "reference": _or_none(record.get("number")),
            "lang": ctx.lang,
            "status_id": _text(record.get("status")),
            "customer": {
                "customer_id": str(customer_id) if customer_id else f"guest:{email}",
                "email": email,
                "created_at": created,
            },
            "products": [self._line(line) for line in record.get("line_items") or []],
            "cart_id": _text(record.get("cart_hash")) or f"order-{record['id']}",
            "cart_updated_at": modified,
            "amount": total,
            "amount_without_tax": round(total - total_tax, 2),
            "shipping_costs": round(shipping + shipping_tax, 2),
            "shipping_costs_without_tax": shipping,
            "currency": _text(record.get("currency")) or ctx.currency,
            "is_confirmed": record.get("status") in CONFIRMED_STATUSES,
            "created_at": created,
            "updated_at": modified,
            "carrier_id": str(carrier["method_id"]) if carrier and carrier.get("method_id") else None,
            "voucher_used": coupons[0].get("code") if coupons else None,
            "voucher_value": money(record.get("discount_total")) if coupons else None,
        }

    @staticmethod
    def _line(line: Mapping[str, Any]) -> Item:
        quantity = int(line.get("quantity") or 0)
        total, tax = money(line.get("total")), money(line.get("total_tax"))
        per_unit = (lambda amount: round(amount / quantity, 2)) if quantity else (lambda a: a)
        return {
            "product_id": int(line.get("product_id") or 0),
            "product_variation_id": _or_none(line.get("variation_id")),
            "price": per_unit(total + tax),
            "price_without_tax": per_unit(total),
            "quantity": quantity,
        }

    def _products(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        product_id = int(record["id"])
        images = record.get("images") or []
        regular = record.get("regular_price") or record.get("price")
        sale = _or_none(record.get("sale_price"))
        yield "products", {
            "product_id": product_id,
            "lang": ctx.lang,
            "name": _text(record.get("name")),
            "description": _text(record.get("description")),
            "description_short": _text(record.get("short_description")),
            "link": _text(record.get("permalink")) or f"{ctx.shop_url}/?p={product_id}",
            "currency": ctx.currency,
            "price": money(regular),
            "price_discount": money(sale) if sale is not None else None,
            "quantity_remaining": int(record.get("stock_quantity") or 0),
            "is_active": record.get("status") == "publish",
            "created_at": created,
            "updated_at": modified,
            "reference": _or_none(record.get("sku")),
            "image_link": images[0].get("src") if images else None,
            "category_ids": [int(c["id"]) for c in record.get("categories") or []],
        }
        for variation in record.get("_variations") or []:
            attributes = ", ".join(
                _text(a.get("option")) for a in variation.get("attributes") or []
            )
            v_regular = variation.get("regular_price") or variation.get("price")
            v_sale = _or_none(variation.get("sale_price"))
            yield "variations", {
                "variation_id": int(variation["id"]),
                "product_id": product_id,
                "name": f"{_text(record.get('name'))} - {attributes}" if attributes
                else _text(record.get("name")),
                "lang": ctx.lang,
                "link": _text(variation.get("permalink")) or _text(record.get("permalink")),
                "price": money(v_regular),
                "price_discount": money(v_sale) if v_sale is not None else None,
                "quantity_remaining": int(variation.get("stock_quantity") or 0),
                "is_default": False,
                "reference": _or_none(variation.get("sku")),
            }
        for index, image in enumerate(images):
            yield "images", {
                "image_id": int(image["id"]),
                "product_id": product_id,
                "lang": ctx.lang,
                "url": _text(image.get("src")),
                "is_default": index == 0,
            }

    def _categories(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield "categories", {
            "category_id": int(record["id"]),
            "lang": ctx.lang,
            "name": _text(record.get("name")),
            "description": _text(record.get("description")),
            "link": f"{ctx.shop_url}/product-category/{_text(record.get('slug'))}/",
            "is_active": True,
            "created_at": EPOCH,
            "updated_at": EPOCH,
            "parent_category_id": _or_none(record.get("parent")),
        }

    def _coupons(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        kind = "free_shipping" if record.get("free_shipping") else _VOUCHER_TYPES.get(
            _text(record.get("discount_type")), "amount_reduction"
        )
        expires = utc(record.get("date_expires_gmt"))
        yield "vouchers", {
            "voucher_id": str(record["id"]),
            "lang": ctx.lang,
            "code": _text(record.get("code")),
            "description": _text(record.get("description")),
            "started_at": created,
            "ended_at": expires,
            "type_voucher": kind,
            "value": money(record.get("amount")),
            "minimum_amount": money(record.get("minimum_amount")),
            "currency": ctx.currency,
            "reduction_tax": False,
            "is_used": int(record.get("usage_count") or 0) > 0,
            "is_active": True,
            "created_at": created,
            "updated_at": modified,
        }

    def _statuses(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield "statuses", {
            "status_id": _text(record.get("slug")),
            "lang": ctx.lang,
            "name": _text(record.get("name")),
            "is_deleted": False,
            "created_at": EPOCH,
            "updated_at": EPOCH,
        }
