"""Shopify (Admin GraphQL) records to the API's target items.

Choices a reader should know:

- ids are the numeric ends of the GIDs (``gid://shopify/Order/5551234`` → ``5551234``, the
  REST id); timestamps are UTC already and sent as ISO 8601 ``Z``;
- money is the shop currency (``shopMoney``); a line's ``price`` is per unit with tax and
  ``price_without_tax`` per unit without, from the line's discounted total and its tax
  lines, whether the shop's prices include taxes or not;
- an order's status is its financial status (``displayFinancialStatus``: PAID, REFUNDED…),
  the statuses stream lists that enum; an order is confirmed when Shopify says so and it is
  not cancelled; its ``created_at`` is ``processedAt`` (the purchase time, also for imports);
- categories are **collections** (product types have no ids); a collection has no creation
  time in the API, so its ``updatedAt`` stands for both;
- manufacturers are product **vendors**, keyed by name;
- vouchers are discount **codes**: one voucher per redeem code of a code discount;
- carts are abandoned checkouts (recovered ones too, ``is_converted``); their lines carry
  no tax lines, so ``price_without_tax`` applies the checkout's tax share;
- a product's single "Default Title" variant is the product itself: no variation is sent
  for it; the product's price is its first variant's (``compareAtPrice`` is the regular
  price when set, ``price`` then the discounted one);
- guest orders carry the customer ``guest:<email>``; the orders' carts are ``order-<id>``
  (the Admin GraphQL API links no checkout to an order).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from connectors.marketing.references import stream_order
from connectors.sources.base import RawRecord
from pipelines.engine.mappings.base import Item, MappingContext, money, utc

EPOCH = "1970-01-01T00:00:00Z"
_LANG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,4})?$")
_DISPLAYED = re.compile(r"\*\*(.+?)\*\*")


def number(gid: Any) -> int:
    """The numeric id at the end of a GID (0 when there is none)."""
    tail = str(gid or "").split("?")[0].rsplit("/", 1)[-1]
    return int(tail) if tail.isascii() and tail.isdigit() else 0  # "²" is no number


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _or_none(value: Any) -> Any:
    return value if value not in ("", None) else None


def _amount(bag: Any) -> float:
    """A MoneyBag's shop amount (or a MoneyV2's) as a number."""
    if isinstance(bag, Mapping):
        inner = bag.get("shopMoney", bag)
        return money(inner.get("amount") if isinstance(inner, Mapping) else None)
    return money(bag)


def _taxes(lines: Any) -> float:
    return round(sum(_amount(t.get("priceSet")) for t in lines or ()), 2)


def _nodes(connection: Any) -> list[dict[str, Any]]:
    return list((connection or {}).get("nodes") or [])


def _split(total: float, tax: float, included: bool) -> tuple[float, float]:
    """(with tax, without tax) of an amount that does or does not include ``tax``."""
    return (round(total, 2), round(total - tax, 2)) if included else (
        round(total + tax, 2), round(total, 2))


class ShopifyMapping:
    platform: ClassVar[str] = "shopify"
    #: stream -> the resources it feeds, listed by name: the order they sync in comes from
    #: the table of who refers to whom (connectors/marketing/references.py) alone
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = stream_order({
        "carts": ("carts",),
        "categories": ("categories",),
        "customers": ("customers", "addresses"),
        "manufacturers": ("manufacturers",),
        "orders": ("carriers", "orders"),
        "products": ("products", "variations", "images"),
        "statuses": ("statuses",),
        "vouchers": ("vouchers",),
    })

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield from getattr(self, f"_{stream}")(record, ctx)

    def _statuses(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        shown = _DISPLAYED.search(_text(record.get("description")))
        yield "statuses", {
            "status_id": _text(record.get("name")), "lang": ctx.lang,
            "name": shown.group(1) if shown else _text(record.get("name")).replace("_", " ").capitalize(),
            "is_deleted": False, "created_at": EPOCH, "updated_at": EPOCH,
        }

    def _manufacturers(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield "manufacturers", {"manufacturer_id": _text(record.get("name")),
                                "name": _text(record.get("name")), "is_active": True,
                                "created_at": EPOCH, "updated_at": EPOCH}

    def _categories(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        changed = utc(record.get("updatedAt")) or EPOCH
        yield "categories", {
            "category_id": number(record["id"]), "lang": ctx.lang,
            "name": _text(record.get("title")), "description": _text(record.get("description")),
            "link": f"{ctx.shop_url}/collections/{_text(record.get('handle'))}",
            "is_active": True, "created_at": changed, "updated_at": changed,
        }

    def _customers(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        customer_id = str(number(record["id"]))
        consent = record.get("emailMarketingConsent") or {}
        address = record.get("defaultEmailAddress") or {}
        subscribed = (consent.get("marketingState") or address.get("marketingState")) == "SUBSCRIBED"
        locale = _text(record.get("locale"))
        yield "customers", {
            "customer_id": customer_id,
            "email": _text(address.get("emailAddress") or record.get("email")),
            "first_name": _text(record.get("firstName")), "last_name": _text(record.get("lastName")),
            "is_opt_in": subscribed, "is_newsletter_subscribed": subscribed,
            "lang": locale if _LANG.match(locale) else ctx.lang,
            "is_active": record.get("state") != "DISABLED",
            "created_at": utc(record.get("createdAt")) or EPOCH,
            "updated_at": utc(record.get("updatedAt")) or EPOCH,
            "phone_number": _or_none(record.get("phone")),
        }
        for place in record.get("addresses") or ():
            yield "addresses", {
                "address_id": number(place.get("id")), "customer_id": customer_id,
                "first_name": _text(place.get("firstName")), "last_name": _text(place.get("lastName")),
                "address_line_1": _text(place.get("address1")),
                "address_line_2": _or_none(place.get("address2")),
                "postal_code": _text(place.get("zip")), "city": _text(place.get("city")),
                "country": _text(place.get("countryCodeV2")),
                "company": _or_none(place.get("company")),
                "primary_phone": _or_none(place.get("phone")), "is_active": True,
            }

    def _products(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        product_id = number(record["id"])
        variants = sorted(_nodes(record.get("variants")), key=lambda v: v.get("position") or 0)
        images = [m for m in _nodes(record.get("media")) if (m.get("image") or {}).get("url")]
        link = _text(record.get("onlineStoreUrl")) or f"{ctx.shop_url}/products/{_text(record.get('handle'))}"
        first = variants[0] if variants else {}
        regular, discounted = self._prices(first)
        barcode = _text(first.get("barcode"))
        yield "products", {
            "product_id": product_id, "lang": ctx.lang, "name": _text(record.get("title")),
            "description": _text(record.get("descriptionHtml")), "link": link,
            "currency": ctx.currency, "price": regular, "price_discount": discounted,
            "quantity_remaining": int(record.get("totalInventory") or 0),
            "is_active": record.get("status") == "ACTIVE",
            "created_at": utc(record.get("createdAt")) or EPOCH,
            "updated_at": utc(record.get("updatedAt")) or EPOCH,
            "reference": _or_none(first.get("sku")),
            "ean13": barcode if len(barcode) == 13 and barcode.isdigit() else None,
            "image_link": images[0]["image"]["url"] if images else None,
            "category_ids": [number(c.get("id")) for c in _nodes(record.get("collections"))],
            "manufacturer_id": _or_none(record.get("vendor")),
        }
        if not (len(variants) == 1 and variants[0].get("title") == "Default Title"):
            for variant in variants:
                v_regular, v_discounted = self._prices(variant)
                v_barcode = _text(variant.get("barcode"))
                yield "variations", {
                    "variation_id": number(variant["id"]), "product_id": product_id,
                    "name": f"{_text(record.get('title'))} - {_text(variant.get('title'))}",
                    "lang": ctx.lang, "link": f"{link}?variant={number(variant['id'])}",
                    "price": v_regular, "price_discount": v_discounted,
                    "quantity_remaining": int(variant.get("inventoryQuantity") or 0),
                    "is_default": variant is variants[0], "reference": _or_none(variant.get("sku")),
                    "ean13": v_barcode if len(v_barcode) == 13 and v_barcode.isdigit() else None,
                }
        for index, media in enumerate(images):
            yield "images", {"image_id": number(media["id"]), "product_id": product_id,
                             "lang": ctx.lang, "url": media["image"]["url"],
                             "is_default": index == 0}

    @staticmethod
    def _prices(variant: Mapping[str, Any]) -> tuple[float, float | None]:
        """(regular price, discounted price or None): ``compareAtPrice`` is the regular
        price when a variant is on sale."""
        price, compare = variant.get("price"), _or_none(variant.get("compareAtPrice"))
        if compare is not None and money(compare) > money(price):
            return money(compare), money(price)
        return money(price), None

    def _vouchers(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        discount = record.get("codeDiscount") or {}
        kind = discount.get("__typename")
        value = ((discount.get("customerGets") or {}).get("value")) or {}
        if kind == "DiscountCodeFreeShipping":
            type_voucher, amount = "free_shipping", None
        elif value.get("__typename") == "DiscountPercentage":
            type_voucher, amount = "percentage_reduction", round(float(value.get("percentage") or 0) * 100, 2)
        else:
            type_voucher = "amount_reduction"
            amount = money((value.get("amount") or {}).get("amount")) if value.get("amount") else None
        minimum = ((discount.get("minimumRequirement") or {}).get("greaterThanOrEqualToSubtotal")) or {}
        created = utc(discount.get("createdAt")) or EPOCH
        for code in _nodes(discount.get("codes")):
            yield "vouchers", {
                "voucher_id": str(number(code.get("id"))), "lang": ctx.lang,
                "code": _text(code.get("code")),
                "description": _text(discount.get("title") or discount.get("summary")),
                "started_at": utc(discount.get("startsAt")) or created,
                "ended_at": utc(discount.get("endsAt")), "type_voucher": type_voucher,
                "value": amount, "minimum_amount": money(minimum.get("amount")),
                "currency": _text(minimum.get("currencyCode")) or ctx.currency,
                "reduction_tax": False, "is_used": int(code.get("asyncUsageCount") or 0) > 0,
                "is_active": discount.get("status") == "ACTIVE", "created_at": created,
                "updated_at": utc(discount.get("updatedAt")) or created,
            }

    def _orders(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        included = bool(record.get("taxesIncluded"))
        created = utc(record.get("processedAt") or record.get("createdAt")) or EPOCH
        updated = utc(record.get("updatedAt")) or created
        customer = record.get("customer") or {}
        email = _text(record.get("email") or customer.get("email"))
        shipping_line = record.get("shippingLine") or {}
        carrier = _text(shipping_line.get("code") or shipping_line.get("title"))
        if carrier:
            yield "carriers", {"carrier_id": carrier,
                               "name": _text(shipping_line.get("title")) or carrier,
                               "is_active": True, "created_at": EPOCH, "updated_at": EPOCH}
        total, tax = _amount(record.get("totalPriceSet")), _amount(record.get("totalTaxSet"))
        shipping = _amount(record.get("totalShippingPriceSet"))
        shipping_with, shipping_without = _split(shipping, _taxes(shipping_line.get("taxLines")),
                                                 included)
        codes = record.get("discountCodes") or []
        order_id = str(number(record["id"]))
        yield "orders", {
            "order_id": order_id, "reference": _or_none(record.get("name")), "lang": ctx.lang,
            "status_id": _text(record.get("displayFinancialStatus")),
            "customer": {
                "customer_id": str(number(customer["id"])) if customer.get("id") else f"guest:{email}",
                "email": email,
                "created_at": utc(customer.get("createdAt")) or created,
            },
            "products": [self._line(line, included) for line in _nodes(record.get("lineItems"))],
            "cart_id": f"order-{order_id}", "cart_updated_at": updated,
            "amount": total, "amount_without_tax": round(total - tax, 2),
            "shipping_costs": shipping_with, "shipping_costs_without_tax": shipping_without,
            "currency": _text(record.get("currencyCode")) or ctx.currency,
            "is_confirmed": bool(record.get("confirmed")) and not record.get("cancelledAt"),
            "created_at": created, "updated_at": updated,
            "carrier_id": carrier or None,
            "voucher_used": codes[0] if codes else None,
            "voucher_value": _amount(record.get("totalDiscountsSet")) if codes else None,
        }

    @staticmethod
    def _line(line: Mapping[str, Any], included: bool) -> Item:
        quantity = int(line.get("quantity") or 0)
        with_tax, without_tax = _split(_amount(line.get("discountedTotalSet")),
                                       _taxes(line.get("taxLines")), included)
        per_unit = (lambda a: round(a / quantity, 2)) if quantity else (lambda a: a)
        variant = number((line.get("variant") or {}).get("id"))
        return {
            "product_id": number((line.get("product") or {}).get("id")),
            "product_variation_id": variant or None,
            "price": per_unit(with_tax), "price_without_tax": per_unit(without_tax),
            "manufacturer_id": _or_none(line.get("vendor")), "quantity": quantity,
        }

    def _carts(self, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        total, tax = _amount(record.get("totalPriceSet")), _amount(record.get("totalTaxSet"))
        included = bool(record.get("taxesIncluded"))
        share = (total - tax) / total if included and total else 1.0
        customer = record.get("customer") or {}
        currency = ((record.get("totalPriceSet") or {}).get("shopMoney") or {}).get("currencyCode")
        products = []
        for line in _nodes(record.get("lineItems")):
            unit = _amount(line.get("originalUnitPriceSet"))
            variant = number((line.get("variant") or {}).get("id"))
            products.append({
                "product_id": number((line.get("product") or {}).get("id")),
                "product_variation_id": variant or None,
                "price": unit if included else round(unit * (1 + tax / total), 2) if total else unit,
                "price_without_tax": round(unit * share, 2),
                "quantity": int(line.get("quantity") or 0),
            })
        created = utc(record.get("createdAt")) or EPOCH
        yield "carts", {
            "cart_id": str(number(record["id"])),
            "customer_id": str(number(customer["id"])) if customer.get("id") else None,
            "email": _or_none(customer.get("email")),
            "currency": _text(currency) or ctx.currency, "amount": total, "products": products,
            "created_at": created, "updated_at": utc(record.get("updatedAt")) or created,
            "is_converted": record.get("completedAt") is not None,
        }
