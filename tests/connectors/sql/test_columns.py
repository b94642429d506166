"""The column mapping both generic platforms share: projecting a row into record fields
(connectors/sources/sql/columns.py), turning a record into a valid item
(pipelines/engine/mappings/columns.py), and the configuration checks that name what to fix."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.sql.columns import ChangeTimes, StreamSpec, key_text, normalize, zone
from connectors.sources.sql.projection import project
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.mappings.base import MappingContext, item_key
from pipelines.engine.mappings.columns import SqlMapping
from sandbox.shops.files.config import connection as files_connection
from sandbox.shops.sql.config import connection as sql_connection

PARIS = zone("Europe/Paris")
CTX = MappingContext("https://shop.example", "fr", "EUR", None)


def item(stream: str, record: dict[str, Any]) -> dict[str, Any]:
    ((resource, mapped),) = SqlMapping().map(stream, record, CTX)
    assert resource == stream
    return mapped


def reasons(stream: str, mapped: dict[str, Any]) -> list[str]:
    return validate_item(SYNC_RESOURCES[stream].model, mapped)


@pytest.mark.parametrize(("value", "expected"), [
    (datetime(2024, 7, 1, 12, 0), "2024-07-01T10:00:00+00:00"),  # naive: shop-local
    (datetime(2024, 7, 1, 12, 0, tzinfo=UTC), "2024-07-01T12:00:00+00:00"),
    ("2024-01-15 08:30:00", "2024-01-15T07:30:00+00:00"),
    ("2024-01-15T08:30:00.250-05:00", "2024-01-15T13:30:00.250000+00:00"),
    ("2024-10-27 02:30:00", "2024-10-27T00:30:00+00:00"),  # twice that night: the first
    (date(1990, 5, 1), "1990-05-01"),
    ("1990-05-01", "1990-05-01"),  # a date is not a time
    ("Note 2024-01-15 08:30", "Note 2024-01-15 08:30"),
    (Decimal("12.30"), Decimal("12.30")),
])
def test_values_leave_the_connector_with_times_in_utc(value, expected):
    assert normalize(value, PARIS) == expected


@pytest.mark.parametrize(("key", "text"), [
    (17, "17"), (-3, "-3"), (2**70, str(2**70)), (True, "True"), (17.0, "17"), (2.0**60, "1.152921504606847e+18"),
    (" a7 ", "a7"), ("", None), ("  ", None), (None, None),
])
def test_a_key_reads_as_its_position_s_record_id(key: Any, text: str | None) -> None:
    assert key_text(key) == text


def test_change_times_read_alike_in_a_row_are_one_datetime():
    read = ChangeTimes()
    first, again = read("2024-01-15T07:30:00+00:00"), read("2024-01-15T07:30:00+00:00")
    other = read("2024-01-15T07:30:01+00:00")
    assert first is again and first == datetime(2024, 1, 15, 7, 30, tzinfo=UTC)
    assert other == datetime(2024, 1, 15, 7, 30, 1, tzinfo=UTC)
    assert read("2024-01-15T07:30:00+00:00") == first


def test_a_row_projects_into_nested_fields_constants_templates_and_the_cursor_time():
    spec = StreamSpec.model_validate({
        "key": "id", "cursor": "changed",
        "columns": {"order_id": "id", "customer.email": "buyer.mail", "amount": "total"},
        "constants": {"is_confirmed": True, "customer.customer_id": "guest"},
        "templates": {"cart_id": "cart-{id}-{missing}"},
        "lines": {"column": "items", "columns": {"product_id": "sku", "quantity": "n"},
                  "constants": {"price": 0}},
    })
    row = {"id": 7, "total": "12.5", "changed": "2024-02-01 10:00:00",
           "buyer": {"mail": "a@example.org"}, "items": '[{"sku": 3, "n": 2}]'}

    assert project(spec, row, PARIS) == {
        "order_id": 7, "customer": {"email": "a@example.org", "customer_id": "guest"},
        "amount": "12.5", "updated_at": "2024-02-01T09:00:00+00:00", "is_confirmed": True,
        "cart_id": "cart-7-", "products": [{"product_id": 3, "quantity": 2, "price": 0}],
    }


def test_values_become_what_the_item_wants():
    mapped = item("customers", {
        "customer_id": 17.0, "email": "a@example.org", "first_name": "A", "last_name": "B",
        "is_opt_in": "yes", "is_newsletter_subscribed": 0, "is_active": "t",
        "created_at": "2024-02-01T09:00:00+00:00", "birth_date": "1990-05-01 00:00:00",
        "group_ids": "2|3", "phone_number": "", "_changed_at": "2024-03-01T00:00:00+00:00",
    })
    assert mapped == {
        "customer_id": "17", "email": "a@example.org", "first_name": "A", "last_name": "B",
        "is_opt_in": True, "is_newsletter_subscribed": False, "is_active": True,
        "created_at": "2024-02-01T09:00:00Z", "birth_date": "1990-05-01",
        "group_ids": ["2", "3"], "phone_number": "", "lang": "fr",
        "updated_at": "2024-03-01T00:00:00Z",
    }
    assert reasons("customers", mapped) == []


def test_an_order_gets_its_defaults_and_lines_their_numbers():
    mapped = item("orders", {
        "order_id": 1, "status_id": "paid", "cart_id": 9,
        "customer": {"customer_id": 5, "email": "c@example.org", "created_at": "2024-01-01"},
        "products": [{"product_id": "007", "price": Decimal("1.10"), "price_without_tax": "0.9",
                      "quantity": "2", "product_variation_id": ""}],
        "amount": "2.2", "amount_without_tax": 1.8, "shipping_costs": 0,
        "shipping_costs_without_tax": "0", "is_confirmed": 1,
        "created_at": "2024-01-02T00:00:00+00:00", "updated_at": "2024-01-03T00:00:00+00:00",
    })
    assert mapped["products"] == [{"product_id": 7, "price": 1.1, "price_without_tax": 0.9,
                                   "quantity": 2, "product_variation_id": None}]
    assert mapped["customer"] == {"customer_id": "5", "email": "c@example.org",
                                  "created_at": "2024-01-01T00:00:00Z"}
    assert (mapped["currency"], mapped["cart_updated_at"]) == ("EUR", "2024-01-03T00:00:00Z")
    assert reasons("orders", mapped) == []


def test_what_cannot_be_converted_is_passed_on_for_validation_to_name():
    mapped = item("products", {"product_id": "P-1", "price": "12,50", "is_active": "maybe",
                               "created_at": "yesterday", "quantity_remaining": 2.5})
    assert (mapped["product_id"], mapped["price"], mapped["is_active"]) == ("P-1", "12,50", "maybe")
    found = reasons("products", mapped)
    assert "created_at: 'yesterday' is not an ISO 8601 timestamp" in found
    assert any(r.startswith("price: Input should be a valid number") for r in found)
    assert any(r.startswith("quantity_remaining:") for r in found)


def test_a_record_the_connector_could_not_read_fails_validation_under_its_origin():
    record = {"_errors": ["orders/a.jsonl:7: not JSON: unexpected end"],
              "_origin": "orders/a.jsonl:7", "_key": "orders/a.jsonl:7",
              "_changed_at": "2025-01-01T00:00:00+00:00"}
    mapped = item("orders", record)

    assert mapped["order_id"] == {"malformed": "orders/a.jsonl:7",
                                  "errors": ["orders/a.jsonl:7: not JSON: unexpected end"]}
    assert mapped["_errors"] == ["orders/a.jsonl:7: not JSON: unexpected end"]
    assert "order_id: Input should be a valid string" in reasons("orders", mapped)
    other = item("orders", {**record, "_origin": "orders/a.jsonl:9"})
    assert item_key("orders", mapped) != item_key("orders", other)


def test_the_fakes_configurations_are_valid():
    parse_config({"sources": [
        {"name": "db", "platform": "sql", "connection": sql_connection("sqlite:////tmp/x.db"),
         "data_source": {"label": "db"}},
        {"name": "drop", "platform": "files", "connection": files_connection("/tmp/drop"),
         "data_source": {"label": "drop"}},
    ]})


def problems(source: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config({"sources": [{"name": "s", **source}]})
    return caught.value.problems


def test_configuration_problems_name_the_field_and_the_fix():
    found = problems({"platform": "sql", "connection": {
        "url": "postgresql://shop:pw@db.example/shop", "options": {"tz": "x"},
        "streams": {"orders": {"table": "o", "key": "id", "columns": {"amout": "total"}},
                    "ordres": {"table": "o", "key": "id"}}}})
    assert found == [
        ("sources[0].connection.url: holds a password — put the URL in an environment variable"
         " and name it in connection.url_env"),
        ("sources[0].connection.options.tz: not an option of the sql platform; known:"
         " timezone, page_size, allow_unencrypted"),
        ("sources[0].connection.streams.orders.columns.amout: Order has no field 'amout'; its"
         " fields: id_data_source, source_label, shop_id, order_id, lang, status_id, customer,"
         " products, cart_id, cart_updated_at, amount, amount_without_tax, shipping_costs,"
         " shipping_costs_without_tax, currency, is_confirmed, created_at, updated_at,"
         " reference, carrier_id, address_delivery_id, address_invoice_id, shipping_number,"
         " voucher_used, voucher_value"),
        ("sources[0].connection.streams.ordres: no resource 'ordres'; streams are named after"
         " the resource they feed: statuses, carriers, groups, categories, manufacturers,"
         " customers, addresses, products, variations, images, vouchers, carts, orders"),
    ]
    found = problems({"platform": "files", "resources": ["orders"], "connection": {
        "path": "/tmp/drop", "options": {"timezone": "Mars/Olympus"},
        "streams": {"orders": {"cursor": "changed"},
                    "carts": {"key": "id", "lines": {"table": "items", "parent": "id"}}}}})
    assert found == [
        ("sources[0].connection.options.timezone: unknown time zone 'Mars/Olympus': use an IANA"
         " name like Europe/Paris (naive timestamps of the source are read in it)"),
        "sources[0].connection.streams.orders.key: Field required — add it",
        ("sources[0].connection.streams.carts: lines: a file stream takes its lines from a"
         " `column` of the row (a JSON list); child tables are for SQL sources"),
    ]
