"""PrestaShop (webservice) records to the API's target items.

Choices a reader should know:

- every record carries ``_shop`` (see connectors/sources/prestashop/shop.py): shop-local
  times become ISO 8601 UTC with its time zone, ``id_lang``/``id_currency`` become ISO
  codes with its tables; zero dates (``0000-00-00 …``) become null;
- language-scoped resources (statuses, groups, categories, products, variations, images,
  vouchers) give one item per language read, from the multilingual fields; a text missing
  in a language stays empty rather than borrowing another language's;
- values are read as PrestaShop 1.7 (strings) or 8 (numbers) send them;
- a product's price is PrestaShop's base price, tax excluded (the webservice has no taxed
  price); a variation's is that price plus the combination's impact;
- order lines use the unit prices with and without tax the order recorded; amounts are the
  order's ``total_paid_tax_incl``/``_excl`` and shipping ``total_shipping_tax_incl``/``_excl``;
  an order is confirmed when PrestaShop counts it ``valid``; the discount total is sent as
  ``voucher_value`` (the codes used are not in the order resource);
- carts are abandoned carts (the connector drops those with an order): ``is_converted`` is
  false, lines are priced at the products' current prices tax excluded (the webservice has
  no cart totals), a product since deleted counts 0;
- a customer or address soft-deleted (``deleted=1``) is sent inactive; so is a deleted
  carrier; statuses carry their ``deleted`` flag;
- a cart rule's multilingual name is the voucher's description (its ``description`` field
  is an internal note); its type is free shipping, a percentage or an amount, in that order;
  ``is_used`` means none is left (``quantity`` 0);
- order states and carriers have no dates in PrestaShop: they carry the Unix epoch, so that
  re-reading them changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from connectors.marketing.references import stream_order
from connectors.sources.base import RawRecord
from connectors.sources.prestashop.values import (
    as_bool,
    as_float,
    as_int,
    association,
    is_zero_date,
    translations,
    utc_text,
)
from pipelines.engine.mappings.base import Item, MappingContext, money

EPOCH = "1970-01-01T00:00:00Z"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _or_none(value: Any) -> Any:
    return None if value in ("", None, 0, "0") else value


def _shop(record: RawRecord, ctx: MappingContext) -> dict[str, Any]:
    return record.get("_shop") or {"timezone": "UTC", "languages": {"1": ctx.lang},
                                   "all_languages": {"1": ctx.lang}, "currencies": {},
                                   "default_lang": ctx.lang, "default_currency": ctx.currency,
                                   "url": ctx.shop_url}


def _time(record: RawRecord, field: str, shop: Mapping[str, Any]) -> str | None:
    return utc_text(record.get(field), shop["timezone"])


def _times(record: RawRecord, shop: Mapping[str, Any]) -> tuple[str, str]:
    created = _time(record, "date_add", shop) or EPOCH
    return created, _time(record, "date_upd", shop) or created


def _lang(record: RawRecord, shop: Mapping[str, Any]) -> str:
    return shop["all_languages"].get(str(as_int(record.get("id_lang"))), shop["default_lang"])


def _currency(value: Any, shop: Mapping[str, Any]) -> str:
    return shop["currencies"].get(str(as_int(value)), shop["default_currency"])


def _prefix(shop: Mapping[str, Any], lang: str) -> str:
    """PrestaShop prefixes front-office URLs with the language when several are active."""
    return f"/{lang}" if len(shop["languages"]) > 1 else ""


def _image_url(shop: Mapping[str, Any], image: int, slug: str) -> str:
    """The front office's URL of a product image (the webservice's own needs the key)."""
    return f"{shop['url']}/{image}-large_default/{slug}.jpg"


class PrestaShopMapping:
    platform: ClassVar[str] = "prestashop"
    #: stream -> the resources it feeds, listed by name: the order they sync in comes from
    #: the table of who refers to whom (connectors/marketing/references.py) alone
    produces: ClassVar[Mapping[str, tuple[str, ...]]] = stream_order({
        "addresses": ("addresses",),
        "carriers": ("carriers",),
        "cart_rules": ("vouchers",),
        "carts": ("carts",),
        "categories": ("categories",),
        "customers": ("customers",),
        "groups": ("groups",),
        "manufacturers": ("manufacturers",),
        "order_states": ("statuses",),
        "orders": ("orders",),
        "products": ("products", "variations", "images"),
    })

    def map(self, stream: str, record: RawRecord, ctx: MappingContext) -> Iterator[tuple[str, Item]]:
        yield from getattr(self, f"_{stream}")(record, ctx, _shop(record, ctx))

    # reference data ----------------------------------------------------------------------

    def _order_states(self, record: RawRecord, ctx: MappingContext,
                      shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        for lang, name in translations(record.get("name"), shop["languages"]).items():
            yield "statuses", {"status_id": str(as_int(record["id"])), "lang": lang, "name": name,
                               "is_deleted": as_bool(record.get("deleted")),
                               "created_at": EPOCH, "updated_at": EPOCH}

    def _carriers(self, record: RawRecord, ctx: MappingContext,
                  shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        yield "carriers", {"carrier_id": str(as_int(record["id"])), "name": _text(record.get("name")),
                           "is_active": as_bool(record.get("active"))
                           and not as_bool(record.get("deleted")),
                           "created_at": EPOCH, "updated_at": EPOCH}

    def _groups(self, record: RawRecord, ctx: MappingContext,
                shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        for lang, name in translations(record.get("name"), shop["languages"]).items():
            yield "groups", {"group_id": str(as_int(record["id"])), "lang": lang, "name": name,
                             "created_at": created, "updated_at": modified}

    def _categories(self, record: RawRecord, ctx: MappingContext,
                    shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        category_id = as_int(record["id"])
        names = translations(record.get("name"), shop["languages"])
        rewrites = translations(record.get("link_rewrite"), shop["languages"])
        descriptions = translations(record.get("description"), shop["languages"])
        for lang, name in names.items():
            yield "categories", {
                "category_id": category_id, "lang": lang, "name": name,
                "description": descriptions.get(lang, ""),
                "link": f"{shop['url']}{_prefix(shop, lang)}/{category_id}-{rewrites.get(lang, '')}",
                "is_active": as_bool(record.get("active")), "created_at": created,
                "updated_at": modified, "parent_category_id": as_int(record.get("id_parent")) or None,
            }

    def _manufacturers(self, record: RawRecord, ctx: MappingContext,
                       shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        yield "manufacturers", {"manufacturer_id": str(as_int(record["id"])),
                                "name": _text(record.get("name")),
                                "is_active": as_bool(record.get("active")),
                                "created_at": created, "updated_at": modified}

    # customers ---------------------------------------------------------------------------

    def _customers(self, record: RawRecord, ctx: MappingContext,
                   shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        birthday = record.get("birthday")
        groups = [str(as_int(g.get("id"))) for g in association(record, "groups")]
        yield "customers", {
            "customer_id": str(as_int(record["id"])), "email": _text(record.get("email")),
            "first_name": _text(record.get("firstname")), "last_name": _text(record.get("lastname")),
            "is_opt_in": as_bool(record.get("optin")),
            "is_newsletter_subscribed": as_bool(record.get("newsletter")),
            "lang": _lang(record, shop),
            "is_active": as_bool(record.get("active")) and not as_bool(record.get("deleted")),
            "created_at": created, "updated_at": modified,
            "birth_date": None if is_zero_date(birthday) else str(birthday)[:10],
            "group_ids": groups or None,
        }

    def _addresses(self, record: RawRecord, ctx: MappingContext,
                   shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        yield "addresses", {
            "address_id": as_int(record["id"]), "customer_id": str(as_int(record.get("id_customer"))),
            "first_name": _text(record.get("firstname")), "last_name": _text(record.get("lastname")),
            "address_line_1": _text(record.get("address1")),
            "address_line_2": _or_none(record.get("address2")),
            "postal_code": _text(record.get("postcode")), "city": _text(record.get("city")),
            "country": _text(record.get("_country")), "company": _or_none(record.get("company")),
            "primary_phone": _or_none(record.get("phone")),
            "secondary_phone": _or_none(record.get("phone_mobile")),
            "is_active": not as_bool(record.get("deleted")),
        }

    # catalogue ---------------------------------------------------------------------------

    def _products(self, record: RawRecord, ctx: MappingContext,
                  shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        product_id = as_int(record["id"])
        languages = shop["languages"]
        names = translations(record.get("name"), languages)
        rewrites = translations(record.get("link_rewrite"), languages)
        descriptions = translations(record.get("description"), languages)
        shorts = translations(record.get("description_short"), languages)
        images = [as_int(i.get("id")) for i in association(record, "images")]
        cover = as_int(record.get("id_default_image")) or (images[0] if images else 0)
        price = as_float(record.get("price"))
        for lang, name in names.items():
            link = f"{shop['url']}{_prefix(shop, lang)}/{product_id}-{rewrites.get(lang, '')}.html"
            slug = rewrites.get(lang, "") or str(product_id)
            yield "products", {
                "product_id": product_id, "lang": lang, "name": name,
                "description": descriptions.get(lang, ""), "description_short": shorts.get(lang, ""),
                "link": link, "currency": shop["default_currency"], "price": money(price),
                "quantity_remaining": as_int(record.get("quantity")),
                "is_active": as_bool(record.get("active")), "created_at": created,
                "updated_at": modified, "reference": _or_none(record.get("reference")),
                "ean13": _or_none(record.get("ean13")),
                "image_link": _image_url(shop, cover, slug) if cover else None,
                "category_ids": [as_int(c.get("id")) for c in association(record, "categories")],
                "manufacturer_id": str(as_int(record.get("id_manufacturer")))
                if as_int(record.get("id_manufacturer")) else None,
            }
            for combo in record.get("_combinations") or []:
                options = ", ".join(
                    f"{translations(o.get('group'), languages).get(lang, '')}:"
                    f" {translations(o.get('value'), languages).get(lang, '')}"
                    for o in combo.get("_options") or [])
                yield "variations", {
                    "variation_id": as_int(combo["id"]), "product_id": product_id,
                    "name": f"{name} - {options}" if options else name, "lang": lang,
                    "link": link, "price": money(price + as_float(combo.get("price"))),
                    "quantity_remaining": as_int(combo.get("quantity")),
                    "is_default": as_bool(combo.get("default_on")),
                    "reference": _or_none(combo.get("reference")),
                    "ean13": _or_none(combo.get("ean13")),
                }
            for image in images:
                yield "images", {"image_id": image, "product_id": product_id, "lang": lang,
                                 "url": _image_url(shop, image, slug),
                                 "is_default": image == cover}

    def _cart_rules(self, record: RawRecord, ctx: MappingContext,
                    shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        percent, amount = as_float(record.get("reduction_percent")), as_float(record.get("reduction_amount"))
        kind, value = (("free_shipping", None) if as_bool(record.get("free_shipping")) else
                       ("percentage_reduction", percent) if percent > 0 else
                       ("amount_reduction", amount))
        for lang, name in translations(record.get("name"), shop["languages"]).items():
            yield "vouchers", {
                "voucher_id": str(as_int(record["id"])), "lang": lang,
                "code": _text(record.get("code")), "description": name,
                "started_at": _time(record, "date_from", shop) or created,
                "ended_at": _time(record, "date_to", shop), "type_voucher": kind,
                "value": money(value) if value is not None else None,
                "minimum_amount": money(record.get("minimum_amount")),
                "currency": _currency(record.get("minimum_amount_currency")
                                      or record.get("reduction_currency"), shop),
                "reduction_tax": as_bool(record.get("reduction_tax")),
                "is_used": as_int(record.get("quantity")) == 0,
                "is_active": as_bool(record.get("active")), "created_at": created,
                "updated_at": modified,
                "customer_id": str(as_int(record.get("id_customer")))
                if as_int(record.get("id_customer")) else None,
            }

    # sales -------------------------------------------------------------------------------

    def _orders(self, record: RawRecord, ctx: MappingContext,
                shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        customer = record.get("_customer") or {}
        discounts = money(record.get("total_discounts_tax_incl"))
        yield "orders", {
            "order_id": str(as_int(record["id"])), "reference": _or_none(record.get("reference")),
            "lang": _lang(record, shop), "status_id": str(as_int(record.get("current_state"))),
            "customer": {"customer_id": str(as_int(record.get("id_customer"))),
                         "email": _text(customer.get("email")),
                         "created_at": utc_text(customer.get("date_add"), shop["timezone"]) or created},
            "products": [{
                "product_id": as_int(row.get("product_id")),
                "product_variation_id": as_int(row.get("product_attribute_id")) or None,
                "price": money(row.get("unit_price_tax_incl")),
                "price_without_tax": money(row.get("unit_price_tax_excl")),
                "quantity": as_int(row.get("product_quantity")),
            } for row in association(record, "order_rows")],
            "cart_id": str(as_int(record.get("id_cart"))), "cart_updated_at": modified,
            "amount": money(record.get("total_paid_tax_incl")),
            "amount_without_tax": money(record.get("total_paid_tax_excl")),
            "shipping_costs": money(record.get("total_shipping_tax_incl")),
            "shipping_costs_without_tax": money(record.get("total_shipping_tax_excl")),
            "currency": _currency(record.get("id_currency"), shop),
            "is_confirmed": as_bool(record.get("valid")), "created_at": created,
            "updated_at": modified,
            "carrier_id": str(as_int(record.get("id_carrier"))) if as_int(record.get("id_carrier")) else None,
            "address_delivery_id": as_int(record.get("id_address_delivery")) or None,
            "address_invoice_id": as_int(record.get("id_address_invoice")) or None,
            "shipping_number": _or_none(record.get("shipping_number")),
            "voucher_value": discounts if discounts > 0 else None,
        }

    def _carts(self, record: RawRecord, ctx: MappingContext,
               shop: dict[str, Any]) -> Iterator[tuple[str, Item]]:
        created, modified = _times(record, shop)
        customer = record.get("_customer") or {}
        lines, amount = [], 0.0
        for row in association(record, "cart_rows"):
            price = money(row.get("_unit_price"))
            amount += price * as_int(row.get("quantity"))
            lines.append({"product_id": as_int(row.get("id_product")),
                          "product_variation_id": as_int(row.get("id_product_attribute")) or None,
                          "price": price, "price_without_tax": price,
                          "quantity": as_int(row.get("quantity"))})
        yield "carts", {
            "cart_id": str(as_int(record["id"])),
            "customer_id": str(as_int(record.get("id_customer"))) if as_int(record.get("id_customer")) else None,
            "email": customer.get("email") or None,
            "currency": _currency(record.get("id_currency"), shop),
            "amount": round(amount, 2),
            "products": lines, "created_at": created, "updated_at": modified,
            "is_converted": False,
        }
