"""The records the fake serves, built from a row and the seed when asked for: reference data
and the catalogue (sales.py has customers, carts and orders).

Builders return typed Python values; render.py turns them into each version's wire form
(1.7: every value a string; 8: integers stay integers). Money is a float rendered with six
decimals, multilingual values are ``I18n`` (language id -> text), dates are shop-local
``YYYY-MM-DD HH:MM:SS`` strings, and zero dates are PrestaShop's ``0000-00-00 00:00:00``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sandbox.shops.people import slugify
from sandbox.shops.prestashop import names
from sandbox.shops.prestashop.data import PERSONAS, PRODUCT_KINDS, Row

if TYPE_CHECKING:
    from sandbox.shops.prestashop.store import Store

ZERO_DATE = "0000-00-00 00:00:00"
ZERO_DAY = "0000-00-00"
Record = dict[str, Any]
#: resource -> the builder of its records (sales.py adds those of customers, carts, orders…)
BUILDERS: dict[str, Callable[[Store, Row], Record]] = {}


class I18n(dict[int, str]):
    """A multilingual field: language id -> text."""


def slugs(title: dict[int, str]) -> I18n:
    return I18n({lang: slugify(text) if text else "" for lang, text in title.items()})


def _row_of(table: tuple[tuple[Any, ...], ...], record_id: int) -> tuple[Any, ...]:
    return next(values for values in table if values[0] == record_id)


def language(store: Store, row: Row) -> Record:
    _, name, iso, locale, code, needed = _row_of(names.LANGUAGES, row.id)
    return {"id": row.id, "name": name, "iso_code": iso, "locale": locale,
            "language_code": code, "active": store.settings.languages >= needed,
            "is_rtl": False, "date_format_lite": "m/d/Y" if iso == "en" else "d/m/Y",
            "date_format_full": "m/d/Y H:i:s" if iso == "en" else "d/m/Y H:i:s"}


def currency(store: Store, row: Row) -> Record:
    _, iso, numeric, name, symbol, rate = _row_of(names.CURRENCIES, row.id)
    return {"id": row.id, "name": name, "symbol": symbol, "iso_code": iso,
            "numeric_iso_code": numeric, "precision": 2, "conversion_rate": rate,
            "deleted": False, "active": True}


def country(store: Store, row: Row) -> Record:
    _, iso, prefix, title = _row_of(names.COUNTRIES, row.id)
    return {"id": row.id, "id_zone": 1, "id_currency": 0, "call_prefix": prefix,
            "iso_code": iso, "active": True, "contains_states": iso == "US",
            "need_identification_number": False, "need_zip_code": True,
            "zip_code_format": "NNNNN", "display_tax_label": True, "name": I18n(title)}


def configuration(store: Store, row: Row) -> Record:
    name, value = {
        1: ("PS_SHOP_NAME", "shopsync fake shop"), 2: ("PS_TIMEZONE", store.settings.timezone),
        3: ("PS_LANG_DEFAULT", "1"), 4: ("PS_CURRENCY_DEFAULT", "1"),
        5: ("PS_WEBSERVICE", "1" if store.webservice_enabled else "0"),
        6: ("PS_SHOP_DOMAIN", "shop.example"),
    }[row.id]
    return {"id": row.id, "value": value, "name": name, "id_shop_group": None, "id_shop": None,
            **store.dates(row)}


def group(store: Store, row: Row) -> Record:
    _, title = _row_of(names.GROUPS, row.id)
    return {"id": row.id, "reduction": 5.0 if row.id == 5 else 0.0, "price_display_method": 0,
            "show_prices": True, **store.dates(row), "name": I18n(title)}


def order_state(store: Store, row: Row) -> Record:
    (_, title, color, paid, shipped, delivery, invoice, logable, deleted,
     template) = _row_of(names.ORDER_STATES, row.id)
    return {"id": row.id, "unremovable": row.id <= 13, "delivery": bool(delivery),
            "hidden": False, "send_email": bool(template), "module_name": "",
            "invoice": bool(invoice), "color": color, "logable": bool(logable),
            "shipped": bool(shipped), "paid": bool(paid), "pdf_delivery": bool(shipped),
            "pdf_invoice": bool(invoice), "deleted": bool(deleted), "name": I18n(title),
            "template": I18n({lang: template for lang in title})}


def carrier(store: Store, row: Row) -> Record:
    _, name, reference, active, deleted, free, delay = _row_of(names.CARRIERS, row.id)
    return {"id": row.id, "deleted": bool(deleted), "is_module": False,
            "id_tax_rules_group": 1, "id_reference": reference, "name": name,
            "active": bool(active), "is_free": bool(free),
            "url": "https://www.laposte.fr/outils/suivre-vos-envois?code=@" if row.id == 3 else "",
            "shipping_handling": not free, "shipping_external": False, "range_behavior": 0,
            "shipping_method": 2, "max_width": 0, "max_height": 0, "max_depth": 0,
            "max_weight": 0.0, "grade": 0, "external_module_name": "", "need_range": False,
            "position": row.id - 1, "delay": I18n(delay)}


def _depth(category_id: int) -> int:
    depth, parent = 0, _row_of(names.CATEGORIES, category_id)[1]
    while parent:
        depth, parent = depth + 1, _row_of(names.CATEGORIES, parent)[1]
    return depth


def category(store: Store, row: Row) -> Record:
    title = I18n(_row_of(names.CATEGORIES, row.id)[2]) if row.id <= len(names.CATEGORIES) \
        else I18n(names.t(f"Category {row.id}", f"Catégorie {row.id}", f"Kategorie {row.id}"))
    children = [c.id for c in store.tables["categories"].rows.values() if c.parent == row.id]
    return {"id": row.id, "id_parent": row.parent, "level_depth": _depth(row.id)
            if row.id <= len(names.CATEGORIES) else 2, "nb_products_recursive": -1,
            "active": _row_of(names.CATEGORIES, row.id)[3] == 1
            if row.id <= len(names.CATEGORIES) else True,
            "id_shop_default": 1, "is_root_category": row.id == 2, "position": row.id % 4,
            **store.dates(row), "name": title, "link_rewrite": slugs(title),
            "description": I18n({k: f"<p>{v}</p>" if row.id > 2 else "" for k, v in title.items()}),
            "meta_title": I18n({k: "" for k in title}), "meta_description": I18n({k: "" for k in title}),
            "meta_keywords": I18n({k: "" for k in title}),
            "associations": {"categories": [{"id": c} for c in children]}}


def manufacturer(store: Store, row: Row) -> Record:
    known = row.id <= len(names.MANUFACTURERS)
    name = _row_of(names.MANUFACTURERS, row.id)[1] if known else f"Brand {row.id}"
    active = _row_of(names.MANUFACTURERS, row.id)[2] == 1 if known else True
    return {"id": row.id, "active": active, "link_rewrite": slugify(name), "name": name,
            **store.dates(row),
            "description": I18n(names.t(f"<p>{name}</p>")),
            "short_description": I18n(names.t("")), "meta_title": I18n(names.t("")),
            "meta_description": I18n(names.t("")), "meta_keywords": I18n(names.t("")),
            "associations": {"addresses": [{"id": a.id} for a in store.tables["addresses"].rows.values()
                                           if a.extra == row.id]}}


def product_option(store: Store, row: Row) -> Record:
    _, title, public, color = _row_of(names.PRODUCT_OPTIONS, row.id)
    values = [v[0] for v in names.PRODUCT_OPTION_VALUES if v[1] == row.id]
    return {"id": row.id, "is_color_group": bool(color), "group_type": "color" if color else "select",
            "position": row.id - 1, "name": I18n(title), "public_name": I18n(public),
            "associations": {"product_option_values": [{"id": v} for v in values]}}


def product_option_value(store: Store, row: Row) -> Record:
    _, group_id, title, color = _row_of(names.PRODUCT_OPTION_VALUES, row.id)
    return {"id": row.id, "id_attribute_group": group_id, "color": color,
            "position": row.id, "name": I18n(title)}


def product(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "products", row.id)
    title = I18n(store.titles.get(row.id) or names.t(row.name))
    kind = PRODUCT_KINDS[row.flag]
    combos = [store.tables["combinations"].rows[c] for c in store.children.get(row.id, ())]
    images = [row.id * 10 + k for k in range(1, row.extra + 1)]
    stock = sum(PERSONAS.rng(store.seed, "combinations", c.id).randrange(0, 40) for c in combos) \
        if combos else rng.choice((0, 3, 25, 140))
    options = sorted({v for c in combos for v in divmod(c.extra, 100)})
    return {
        "id": row.id, "id_manufacturer": row.customer, "id_supplier": 0,
        "id_category_default": row.parent, "new": None, "cache_default_attribute":
        combos[0].id if combos else 0, "id_default_image": images[0] if images else None,
        "id_default_combination": combos[0].id if combos else 0, "id_tax_rules_group": 1,
        "position_in_category": row.id % 7,
        "manufacturer_name": next((m[1] for m in names.MANUFACTURERS if m[0] == row.customer), ""),
        "quantity": stock, "type": "simple" if kind in ("standard", "combinations") else kind,
        "id_shop_default": 1, "reference": "" if row.id % 10 == 3 else f"demo_{row.id}",
        "supplier_reference": "", "location": "", "width": 0.0, "height": 0.0, "depth": 0.0,
        "weight": round(rng.randrange(1, 30) / 10, 1), "quantity_discount": False,
        "ean13": f"{rng.randrange(10**12, 10**13)}" if rng.random() < 0.6 else "",
        "isbn": "", "upc": "", "mpn": "", "cache_is_pack": kind == "pack",
        "cache_has_attachments": False, "is_virtual": kind == "virtual", "state": 1,
        "additional_delivery_times": 1, "product_type": kind, "on_sale": False,
        "online_only": False, "ecotax": 0.0, "minimal_quantity": 1,
        "low_stock_threshold": None, "low_stock_alert": False, "price": row.amount / 100,
        "wholesale_price": round(row.amount * 0.4) / 100, "unity": "", "unit_price_ratio": 0.0,
        "additional_shipping_cost": 0.0, "customizable": 0, "text_fields": 0,
        "uploadable_files": 0, "active": bool(row.state), "redirect_type": "301-category",
        "id_type_redirected": 0, "available_for_order": True, "available_date": ZERO_DAY,
        "show_condition": False, "condition": "new", "show_price": True, "indexed": True,
        "visibility": "both", "advanced_stock_management": False, **store.dates(row),
        "pack_stock_type": 3, "meta_description": I18n({k: "" for k in title}),
        "meta_keywords": I18n({k: "" for k in title}), "meta_title": I18n({k: "" for k in title}),
        "link_rewrite": slugs(title), "name": title,
        "description": I18n({k: f"<p>{v}</p>" if v else "" for k, v in title.items()}),
        "description_short": I18n({k: f"<p>{v} – 🌱</p>" if v else "" for k, v in title.items()}),
        "available_now": I18n(names.t("In stock", "En stock", "Auf Lager")),
        "available_later": I18n(names.t("")),
        "associations": {
            "categories": [{"id": 2}, *([{"id": row.parent}] if row.parent != 2 else [])],
            "images": [{"id": i} for i in images],
            "combinations": [{"id": c.id} for c in combos],
            "product_option_values": [{"id": v} for v in options],
            "stock_availables": [{"id": row.id * 1000, "id_product_attribute": 0},
                                 *({"id": row.id * 1000 + i + 1, "id_product_attribute": c.id}
                                   for i, c in enumerate(combos))],
        },
    }


def combination(store: Store, row: Row) -> Record:
    rng = PERSONAS.rng(store.seed, "combinations", row.id)
    size, color = divmod(row.extra, 100)
    return {"id": row.id, "id_product": row.parent, "location": "", "ean13": "", "isbn": "",
            "upc": "", "mpn": "", "quantity": rng.randrange(0, 40),
            "reference": f"demo_{row.parent}_{row.id}", "supplier_reference": "",
            "wholesale_price": 0.0, "price": row.amount / 100, "ecotax": 0.0, "weight": 0.0,
            "unit_price_impact": 0.0, "minimal_quantity": 1, "low_stock_threshold": None,
            "low_stock_alert": False, "default_on": 1 if row.flag else None,
            "available_date": ZERO_DAY,
            "associations": {"product_option_values": [{"id": size}, {"id": color}],
                             "images": []}}


BUILDERS.update(
    languages=language, currencies=currency, countries=country, configurations=configuration,
    groups=group, order_states=order_state, carriers=carrier, categories=category,
    manufacturers=manufacturer, product_options=product_option,
    product_option_values=product_option_value, products=product, combinations=combination)
