"""The columns mapping's conversions take the values a shop mostly sends at once; each
gives what the general path (``scalar``, JSON-safe) gives, with the same problems."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest

from connectors.marketing.items import Order, Product
from pipelines.engine.mappings.base import utc
from pipelines.engine.mappings.columns import (
    _general,
    _scalar_convert,
    convert_model,
    converters_of,
)

KINDS = ("str", "int", "float", "bool", "timestamp", "date")
VALUES: list[Any] = [
    None, "", " ", "abc", "é", "caf\udcc3", "17", " 17 ", "1e3", "1 000", "17.0", "-3", "١٢",
    "yes", "off", "t", "0", "1", "1e400", "Infinity", "NaN",
    0, 1, 2, -1, 17, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**30,
    True, False, 0.0, 1.0, 1.5, -2.25, 2.0**60, float("nan"), float("inf"), float("-inf"),
    Decimal("1.5"), Decimal("17"), date(2024, 5, 1), datetime(2024, 5, 1, 10, 0),
    "2024-05-01T10:00:00Z", "2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00.123+00:00",
    "2024-05-01T10:00:00.123456789Z", "2024-13-01T10:00:00+00:00", "2024-02-30T10:00:00Z",
    "2024-05-01T25:00:00Z", "2024-05-01T10:61:00+00:00", "2024-05-01 10:00:00",
    "2024-05-01T10:00:00+02:00", "2024-05-01Z", "0999-05-01T10:00:00Z",
    "9999-12-31T23:59:59-01:00", "2024-05-01", " 2024-05-01T10:00:00Z", [1, 2], {"a": 1},
]


@pytest.mark.parametrize("kind", KINDS)
def test_each_conversion_gives_what_the_general_path_gives(kind: str) -> None:
    convert = _scalar_convert(kind)
    for value in VALUES:
        fast: list[str] = []
        general: list[str] = []
        got = convert(value, fast, ("products",), 3)
        want = _general(kind, value, general, ("products",), 3)
        assert (type(got), repr(got), fast) == (type(want), repr(want), general), value


@pytest.mark.parametrize("field", ["order_id", "amount", "is_confirmed", "address_delivery_id",
                                   "created_at", "customer", "products"])
def test_a_model_s_fields_convert_as_their_own_conversion_converts_them(field: str) -> None:
    convert = converters_of(Order)[field]
    for value in VALUES:
        whole: list[str] = []
        alone: list[str] = []
        got = convert_model(Order, {field: value}, whole)[field]
        want = convert(value, alone, (), field)
        assert (type(got), repr(got), whole) == (type(want), repr(want), alone), value


def test_fields_outside_the_model_are_left_out() -> None:
    assert convert_model(Product, {"product_id": 3, "_key": "3", "colour": "red"}, []) == {
        "product_id": 3}


def _converted(text: str) -> Any:
    """What ``utc`` makes of text by converting it, whatever its offset."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return ValueError
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except OverflowError:
        return OverflowError


def test_text_already_in_utc_reads_as_converted() -> None:
    for value in VALUES:
        if isinstance(value, str) and value.strip() == value and value[:1].isdigit():
            try:
                got: Any = utc(value)
            except (ValueError, OverflowError) as exc:
                got = type(exc)
            assert got == _converted(value), value


def test_a_problem_names_the_field_where_it_sits() -> None:
    problems: list[str] = []
    item = convert_model(Order, {"order_id": 7, "products": [
        {"product_id": "a", "quantity": 1}, {"product_id": 2.0**60, "quantity": 2**70}]},
        problems)
    assert item["order_id"] == "7"
    assert [p.split(":")[0] for p in problems] == ["products[1].product_id",
                                                   "products[1].quantity"]
