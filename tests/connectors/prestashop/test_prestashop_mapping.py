"""PrestaShop values and records to target items, on hand-made records of both versions'
shapes: shop-local times across DST changes, zero dates, multilingual fields in every form,
one item per language, and the items the models accept."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import SourceError
from connectors.sources.prestashop.values import listed, local_to_utc, translations, utc_to_local
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.prestashop import PrestaShopMapping

SHOP = {"timezone": "Europe/Paris", "languages": {"1": "en", "2": "fr"},
        "all_languages": {"1": "en", "2": "fr", "3": "de"}, "currencies": {"1": "EUR", "2": "USD"},
        "default_lang": "en", "default_currency": "EUR", "url": "https://shop.example"}
CTX = MappingContext("https://shop.example", "en", "EUR", None)


def mapped(stream: str, record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    items = list(PrestaShopMapping().map(stream, {**record, "_shop": SHOP}, CTX))
    for resource, item in items:
        assert validate_item(SYNC_RESOURCES[resource].model, item) == [], (resource, item)
    return items


# values ------------------------------------------------------------------------------------

def test_shop_local_times_become_utc_across_dst_changes() -> None:
    assert local_to_utc("2025-01-15 10:30:00", "Europe/Paris") == datetime(2025, 1, 15, 9, 30, tzinfo=UTC)
    assert local_to_utc("2025-07-15 10:30:00", "Europe/Paris") == datetime(2025, 7, 15, 8, 30, tzinfo=UTC)
    assert local_to_utc("2025-07-15 10:30:00", "America/New_York") == datetime(2025, 7, 15, 14, 30, tzinfo=UTC)
    # the repeated autumn hour: the earlier instant, so that local order stays UTC order
    first = local_to_utc("2025-10-26 02:30:00", "Europe/Paris")
    assert first == datetime(2025, 10, 26, 0, 30, tzinfo=UTC)
    around = ["2025-10-26 01:59:59", "2025-10-26 02:00:00", "2025-10-26 02:59:59", "2025-10-26 03:00:00"]
    instants = [local_to_utc(t, "Europe/Paris") for t in around]
    assert instants == sorted(instants)
    assert utc_to_local(datetime(2025, 10, 26, 1, 30, tzinfo=UTC), "Europe/Paris") == "2025-10-26 02:30:00"
    for zero in ("0000-00-00 00:00:00", "0000-00-00", "", None):
        assert local_to_utc(zero, "Europe/Paris") is None
    with pytest.raises(SourceError, match="never writes"):
        local_to_utc("15/01/2025", "Europe/Paris")


def test_multilingual_fields_in_every_form() -> None:
    languages = {"1": "en", "2": "fr"}
    assert translations([{"id": "1", "value": "Mug"}, {"id": "2", "value": "Tasse"}], languages) \
        == {"en": "Mug", "fr": "Tasse"}
    assert translations([{"id": 1, "value": "Mug"}, {"id": 4, "value": "Taza"}], languages) \
        == {"en": "Mug"}  # 8's integer ids; a language not read is left out
    assert translations("Mug", {"2": "fr"}) == {"fr": "Mug"}  # one language: a plain string
    assert translations(None, {"1": "en"}) == {"en": ""}


def test_both_empty_list_forms() -> None:
    assert listed([], "orders") == []
    assert listed({"orders": []}, "orders") == []
    assert listed({"orders": [{"id": 1}]}, "orders") == [{"id": 1}]
    with pytest.raises(SourceError):
        listed({"customers": "?"}, "customers")


# records -----------------------------------------------------------------------------------

ORDER_17 = {  # PrestaShop 1.7: every value a string
    "id": 7, "id_address_delivery": "4", "id_address_invoice": "4", "id_cart": "12",
    "id_currency": "2", "id_lang": "2", "id_customer": "3", "id_carrier": "0",
    "current_state": "4", "valid": "1", "date_add": "2025-07-01 10:00:00",
    "date_upd": "2025-07-02 12:00:00", "shipping_number": "", "reference": "XKBKNABJK",
    "total_discounts_tax_incl": "0.000000", "total_paid_tax_incl": "102.000000",
    "total_paid_tax_excl": "85.000000", "total_shipping_tax_incl": "7.000000",
    "total_shipping_tax_excl": "5.830000", "invoice_date": "0000-00-00 00:00:00",
    "associations": {"order_rows": [{"id": "8", "product_id": "20", "product_attribute_id": "44",
                                     "product_quantity": "1", "unit_price_tax_incl": "95.000000",
                                     "unit_price_tax_excl": "79.170000"}]},
    "_customer": {"id": 3, "email": "anna@example.org", "date_add": "2024-12-31 23:30:00"},
}


def test_an_order_of_either_version_maps_the_same() -> None:
    ((resource, item),) = mapped("orders", ORDER_17)
    assert resource == "orders"
    assert item["order_id"] == "7" and item["lang"] == "fr" and item["currency"] == "USD"
    assert item["created_at"] == "2025-07-01T08:00:00Z" and item["updated_at"] == "2025-07-02T10:00:00Z"
    assert item["customer"] == {"customer_id": "3", "email": "anna@example.org",
                                "created_at": "2024-12-31T22:30:00Z"}
    assert item["products"] == [{"product_id": 20, "product_variation_id": 44, "price": 95.0,
                                 "price_without_tax": 79.17, "quantity": 1}]
    assert (item["amount"], item["amount_without_tax"]) == (102.0, 85.0)
    assert item["is_confirmed"] is True and item["status_id"] == "4"
    assert item["carrier_id"] is None and item["shipping_number"] is None
    assert item["voucher_value"] is None
    eight = {k: (int(v) if isinstance(v, str) and v.isdigit() and k.startswith("id") else v)
             for k, v in ORDER_17.items()}
    eight["current_state"] = 4
    eight.pop("shipping_number")  # 8 leaves empty fields out
    assert mapped("orders", eight) == [(resource, item)]


def test_language_scoped_records_give_one_item_per_language() -> None:
    state = {"id": 2, "deleted": "0", "name": [{"id": "1", "value": "Payment accepted"},
                                               {"id": "2", "value": "Paiement accepté"}]}
    assert [(i["lang"], i["name"]) for _, i in mapped("order_states", state)] == [
        ("en", "Payment accepted"), ("fr", "Paiement accepté")]
    product = {
        "id": 3, "price": "19.900000", "active": "1", "quantity": "4", "reference": "",
        "id_manufacturer": "2", "id_default_image": "31", "date_add": "2025-01-01 00:00:00",
        "date_upd": "2025-01-02 00:00:00",
        "name": [{"id": "1", "value": "Mug"}, {"id": "2", "value": "Tasse"}],
        "link_rewrite": [{"id": "1", "value": "mug"}, {"id": "2", "value": "tasse"}],
        "description": [{"id": "1", "value": "<p>Mug</p>"}, {"id": "2", "value": ""}],
        "associations": {"categories": [{"id": "2"}, {"id": "8"}], "images": [{"id": "31"}, {"id": "32"}]},
        "_combinations": [{"id": "5", "price": "-1.000000", "quantity": "2", "default_on": "1",
                           "reference": "mug-s", "_options": [
                               {"group": [{"id": "1", "value": "Size"}, {"id": "2", "value": "Taille"}],
                                "value": [{"id": "1", "value": "S"}, {"id": "2", "value": "S"}]}]}],
    }
    items = mapped("products", product)
    products = [i for r, i in items if r == "products"]
    assert [(p["lang"], p["name"], p["link"]) for p in products] == [
        ("en", "Mug", "https://shop.example/en/3-mug.html"),
        ("fr", "Tasse", "https://shop.example/fr/3-tasse.html")]
    assert products[0]["category_ids"] == [2, 8] and products[0]["manufacturer_id"] == "2"
    assert products[0]["image_link"] == "https://shop.example/31-large_default/mug.jpg"
    assert products[1]["description"] == ""  # not borrowed from another language
    variations = [i for r, i in items if r == "variations"]
    assert [(v["lang"], v["name"], v["price"]) for v in variations] == [
        ("en", "Mug - Size: S", 18.9), ("fr", "Tasse - Taille: S", 18.9)]
    images = [i for r, i in items if r == "images"]
    assert [(i["image_id"], i["lang"], i["is_default"]) for i in images] == [
        (31, "en", True), (32, "en", False), (31, "fr", True), (32, "fr", False)]


def test_cart_rules_become_vouchers_of_the_right_kind() -> None:
    base = {"id": 4, "code": "", "quantity": "0", "active": "1", "id_customer": "0",
            "date_from": "2025-06-01 00:00:00", "date_to": "0000-00-00 00:00:00",
            "minimum_amount": "50.000000", "minimum_amount_currency": "1",
            "date_add": "2025-05-01 00:00:00", "date_upd": "2025-05-01 00:00:00",
            "name": [{"id": "1", "value": "5 € off"}, {"id": "2", "value": "5 € offerts"}]}
    kinds = {
        "free_shipping": {"free_shipping": "1", "reduction_percent": "0", "reduction_amount": "0"},
        "percentage_reduction": {"free_shipping": "0", "reduction_percent": "15.00",
                                 "reduction_amount": "0"},
        "amount_reduction": {"free_shipping": "0", "reduction_percent": "0.00",
                             "reduction_amount": "5.000000"},
    }
    for kind, fields in kinds.items():
        items = mapped("cart_rules", {**base, **fields})
        assert {i["type_voucher"] for _, i in items} == {kind}
        assert [i["description"] for _, i in items] == ["5 € off", "5 € offerts"]
        assert all(i["is_used"] and i["ended_at"] is None for _, i in items)
        assert items[0][1]["started_at"] == "2025-05-31T22:00:00Z"


def test_customers_addresses_and_carts() -> None:
    customer = {"id": 5, "email": "z@example.org", "firstname": "Zoë", "lastname": "Li",
                "optin": "0", "newsletter": "1", "id_lang": "3", "active": "1", "deleted": "1",
                "birthday": "0000-00-00", "date_add": "2025-01-01 00:00:00",
                "date_upd": "2025-01-01 00:00:00", "associations": {"groups": [{"id": "3"}]}}
    ((_, item),) = mapped("customers", customer)
    assert item["lang"] == "de" and item["is_active"] is False and item["birth_date"] is None
    assert item["is_newsletter_subscribed"] is True and item["group_ids"] == ["3"]
    address = {"id": 9, "id_customer": "5", "firstname": "Zoë", "lastname": "Li",
               "address1": "1 rue X", "address2": "", "postcode": "75011", "city": "Paris",
               "phone": "", "phone_mobile": "+33 6", "deleted": "0", "_country": "FR"}
    ((_, item),) = mapped("addresses", address)
    assert item["country"] == "FR" and item["secondary_phone"] == "+33 6"
    assert item["primary_phone"] is None and item["is_active"] is True
    cart = {"id": 30, "id_customer": "0", "id_currency": "1", "date_add": "2025-02-01 00:00:00",
            "date_upd": "2025-02-01 00:10:00", "_customer": None,
            "associations": {"cart_rows": [
                {"id_product": "3", "id_product_attribute": "0", "quantity": "2", "_unit_price": 19.9},
                {"id_product": "4", "id_product_attribute": "7", "quantity": "1", "_unit_price": None}]}}
    ((_, item),) = mapped("carts", cart)
    assert item["customer_id"] is None and item["email"] is None and item["amount"] == 39.8
    assert [line["price"] for line in item["products"]] == [19.9, 0.0]
    assert item["is_converted"] is False and item["updated_at"] == "2025-01-31T23:10:00Z"
