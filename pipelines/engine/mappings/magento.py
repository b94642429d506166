"""Magento 2 (REST) records to the API's target items.

Choices a reader should know:

- timestamps are Magento's UTC ``YYYY-MM-DD HH:MM:SS`` (no offset, whatever the store's
  timezone) sent as ISO 8601 ``Z``;
- an order line is an item row without ``parent_item_id``; a configurable sold is a parent
  row (the money) and a child row (the simple product chosen), which becomes the line's
  ``product_variation_id``; prices per unit are after discount, ``price`` with tax;
- an order's ``discount_amount`` is negative in Magento: ``voucher_value`` is its absolute
  value; the carrier is the shipping method's carrier code (``flatrate_flatrate`` →
  ``flatrate``), sent as a carrier too;
- guest orders carry the customer ``guest:<email>``; no customer item is made for them;
- a cart's amount is the sum of its items (price × quantity, without tax): Magento's quote
  has no grand total (that lives at ``carts/{id}/totals``); ``cart_id`` is the quote id,
  which orders carry as ``quote_id``; a cart is converted when it is inactive and holds a
  reserved order number;
- a product is active when enabled and visible; the children of a configurable product
  (not visible individually) are also its variations; links point at the storefront
  (``<shop>/<url_key>.html``), images at ``<shop>/media/catalog/product<file>``;
- the root category (level 0) is not sent; order statuses have no dates in Magento and carry
  the Unix epoch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from connectors.marketing.references import stream_order
from connectors.sources.base import RawRecord
from pipelines.engine.mappings.base import Item, MappingContext, money, utc

EPOCH = "1970-01-01T00:00:00Z"
CONFIRMED_STATES = frozenset({"processing", "complete", "holded"})


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _or_none(value: Any) -> Any:
    return value if value not in ("", None) else None


def _times(record: RawRecord) -> tuple[str, str]:
    created = utc(record.get("created_at")) or EPOCH
    return created, utc(record.get("updated_at")) or created


def _attribute(record: RawRecord, code: str) -> Any:
    """A value of ``custom_attributes`` (Magento sends them as strings)."""
    for attribute in record.get("custom_attributes") or []:
        if attribute.get("attribute_code") == code:
            return attribute.get("value")
    return None


def shop_root(shop_url: str) -> str:
    """The storefront of a REST root: ``https://host/rest/default`` -> ``https://host``."""
    return shop_url.split("/rest/")[0].split("/index.php")[0].rstrip("/")


def _per_unit(amount: float, quantity: int) -> float:
    return round(amount / quantity, 2) if quantity else round(amount, 2)


class MagentoMapping:
    platform: ClassVar[str] = "magento"
    #: stream -> the resources it feeds, listed by name: the order they sync in comes from
    #: the table of who refers to whom (connectors/marketing/references.py) alone
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = stream_order({
        "carts": ("carts",),
        "categories": ("categories",),
        "customers": ("customers", "addresses"),
        "orders": ("carriers", "orders"),
        "products": ("products", "variations", "images"),
        "statuses": ("statuses",),
    })

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield from getattr(self, f"_{stream}")(record, ctx)

    def _customers(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        customer_id = str(record["id"])
        addresses = record.get("addresses") or []
        billing = next((a for a in addresses if str(a.get("id")) == _text(record.get("default_billing"))),
                       addresses[0] if addresses else {})
        yield "customers", {
            "customer_id": customer_id,
            "email": _text(record.get("email")),
            "first_name": _text(record.get("firstname")),
            "last_name": _text(record.get("lastname")),
            "is_opt_in": False,
            "is_newsletter_subscribed": bool((record.get("extension_attributes") or {}).get("is_subscribed")),
            "lang": ctx.lang,
            "is_active": True,
            "created_at": created,
            "updated_at": modified,
            "phone_number": _or_none(billing.get("telephone")),
            "birth_date": _or_none(record.get("dob")),
        }
        for address in addresses:
            street = [line for line in address.get("street") or [] if line]
            yield "addresses", {
                "address_id": int(address["id"]),
                "customer_id": customer_id,
                "first_name": _text(address.get("firstname")),
                "last_name": _text(address.get("lastname")),
                "address_line_1": street[0] if street else "",
                "address_line_2": ", ".join(street[1:]) or None,
                "postal_code": _text(address.get("postcode")),
                "city": _text(address.get("city")),
                "country": _text(address.get("country_id")),
                "company": _or_none(address.get("company")),
                "primary_phone": _or_none(address.get("telephone")),
                "is_active": True,
            }

    def _orders(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        email = _text(record.get("customer_email"))
        carrier = self._carrier(record)
        if carrier is not None:
            yield "carriers", carrier
        total, tax = money(record.get("grand_total")), money(record.get("tax_amount"))
        shipping = money(record.get("shipping_amount"))
        shipping_with_tax = money(record.get("shipping_incl_tax")) or round(
            shipping + money(record.get("shipping_tax_amount")), 2)
        customer_id = record.get("customer_id")
        coupon = _or_none(record.get("coupon_code"))
        yield "orders", {
            "order_id": str(record["entity_id"]),
            "reference": _or_none(record.get("increment_id")),
            "lang": ctx.lang,
            "status_id": _text(record.get("status")),
            "customer": {
                "customer_id": str(customer_id) if customer_id and not record.get("customer_is_guest")
                else f"guest:{email}",
                "email": email,
                "created_at": created,
            },
            "products": self._lines(record.get("items") or []),
            "cart_id": _text(record.get("quote_id")) or f"order-{record['entity_id']}",
            "cart_updated_at": modified,
            "amount": total,
            "amount_without_tax": round(total - tax, 2),
            "shipping_costs": shipping_with_tax,
            "shipping_costs_without_tax": shipping,
            "currency": _text(record.get("order_currency_code")) or ctx.currency,
            "is_confirmed": record.get("state") in CONFIRMED_STATES,
            "created_at": created,
            "updated_at": modified,
            "carrier_id": carrier["carrier_id"] if carrier else None,
            "voucher_used": coupon,
            "voucher_value": abs(money(record.get("discount_amount"))) if coupon else None,
        }

    @staticmethod
    def _carrier(record: RawRecord) -> Item | None:
        assignments = (record.get("extension_attributes") or {}).get("shipping_assignments") or []
        method = _text(((assignments[0] if assignments else {}).get("shipping") or {}).get("method"))
        if not method:
            return None
        code = method.split("_")[0]
        description = _text(record.get("shipping_description"))
        return {"carrier_id": code, "name": description.split(" - ")[0] or code,
                "is_active": True, "created_at": EPOCH, "updated_at": EPOCH}

    @staticmethod
    def _lines(items: list[dict[str, Any]]) -> list[Item]:
        children = {item.get("parent_item_id"): item for item in items if item.get("parent_item_id")}
        lines = []
        for item in items:
            if item.get("parent_item_id"):
                continue
            quantity = round(float(item.get("qty_ordered") or 0))
            net = money(item.get("row_total")) - money(item.get("discount_amount"))
            child = children.get(item.get("item_id"))
            lines.append({
                "product_id": int(item.get("product_id") or 0),
                "product_variation_id": int(child["product_id"]) if child and child.get("product_id") else None,
                "price": _per_unit(net + money(item.get("tax_amount")), quantity),
                "price_without_tax": _per_unit(net, quantity),
                "quantity": quantity,
            })
        return lines

    def _carts(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        customer = record.get("customer") or {}
        billing = record.get("billing_address") or {}
        lines, amount = [], 0.0
        for item in record.get("items") or []:
            quantity = round(float(item.get("qty") or 0))
            price = money(item.get("price"))
            amount += price * quantity
            lines.append({"product_id": item.get("_product_id"), "price": price,
                          "price_without_tax": price, "quantity": quantity})
        currency = (record.get("currency") or {}).get("quote_currency_code")
        yield "carts", {
            "cart_id": str(record["id"]),
            "customer_id": str(customer["id"]) if customer.get("id") else None,
            "email": _or_none(customer.get("email")) or _or_none(billing.get("email")),
            "currency": _text(currency) or ctx.currency,
            "amount": round(amount, 2),
            "products": lines,
            "created_at": created,
            "updated_at": modified,
            "is_converted": not record.get("is_active") and bool(record.get("reserved_order_id")),
        }

    def _products(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record)
        root = shop_root(ctx.shop_url)
        product_id = int(record["id"])
        link = self._link(record, root)
        children = record.get("_children") or []
        price = money(record.get("price"))
        if record.get("type_id") == "configurable" and children:
            price = min(money(c.get("price")) for c in children)
        images = record.get("media_gallery_entries") or []
        links = (record.get("extension_attributes") or {}).get("category_links") or []
        yield "products", {
            "product_id": product_id,
            "lang": ctx.lang,
            "name": _text(record.get("name")),
            "description": _text(_attribute(record, "description")),
            "description_short": _text(_attribute(record, "short_description")),
            "link": link,
            "currency": ctx.currency,
            "price": price,
            "price_discount": self._special(record),
            "quantity_remaining": self._stock(record),
            "is_active": record.get("status") == 1 and record.get("visibility") != 1,
            "created_at": created,
            "updated_at": modified,
            "reference": _or_none(record.get("sku")),
            "image_link": self._image(images[0], root) if images else None,
            "category_ids": [int(c["category_id"]) for c in links if c.get("category_id")],
        }
        for child in children:
            child_images = child.get("media_gallery_entries") or []
            yield "variations", {
                "variation_id": int(child["id"]),
                "product_id": product_id,
                "name": _text(child.get("name")),
                "lang": ctx.lang,
                "link": link,
                "price": money(child.get("price")),
                "price_discount": self._special(child),
                "quantity_remaining": self._stock(child),
                "is_default": False,
                "reference": _or_none(child.get("sku")),
                "image_link": self._image(child_images[0], root) if child_images else None,
            }
        for entry in images:
            yield "images", {
                "image_id": int(entry["id"]),
                "product_id": product_id,
                "lang": ctx.lang,
                "url": self._image(entry, root),
                "is_default": "image" in (entry.get("types") or []),
            }

    @staticmethod
    def _link(record: RawRecord, root: str) -> str:
        key = _attribute(record, "url_key")
        return f"{root}/{key}.html" if key else f"{root}/catalog/product/view/id/{record['id']}"

    @staticmethod
    def _image(entry: Mapping[str, Any], root: str) -> str:
        return f"{root}/media/catalog/product{_text(entry.get('file'))}"

    @staticmethod
    def _special(record: RawRecord) -> float | None:
        special = _or_none(_attribute(record, "special_price"))
        return money(special) if special is not None else None

    @staticmethod
    def _stock(record: RawRecord) -> int:
        stock = (record.get("extension_attributes") or {}).get("stock_item") or {}
        return int(float(stock.get("qty") or 0))

    def _categories(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        if not record.get("level"):
            return  # the invisible root catalog
        created, modified = _times(record)
        path = _attribute(record, "url_path") or _attribute(record, "url_key")
        parent = int(record.get("parent_id") or 0)
        yield "categories", {
            "category_id": int(record["id"]),
            "lang": ctx.lang,
            "name": _text(record.get("name")),
            "description": _text(_attribute(record, "description")),
            "link": f"{shop_root(ctx.shop_url)}/{path}.html" if path else shop_root(ctx.shop_url),
            "is_active": bool(record.get("is_active")),
            "created_at": created,
            "updated_at": modified,
            "parent_category_id": parent if parent > 1 else None,
        }

    def _statuses(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield "statuses", {
            "status_id": _text(record.get("status")),
            "lang": ctx.lang,
            "name": _text(record.get("label")),
            "is_deleted": False,
            "created_at": EPOCH,
            "updated_at": EPOCH,
        }
