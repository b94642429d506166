"""What the item models accept, and how every HTTP source reads JSON: nothing passes that
the API cannot hold as sent, and no integer a platform sends is rounded on the way in."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors.marketing.items import Cart, Customer, Order, Product, validate_item
from connectors.sources.exact import loads

STAMP = "2025-01-02T10:00:00Z"
PRODUCT = {"product_id": 1, "lang": "en", "name": "Tea", "description": "", "link": "l",
           "currency": "EUR", "price": 9.5, "quantity_remaining": 3, "is_active": True,
           "created_at": STAMP, "updated_at": STAMP}
CUSTOMER = {"customer_id": "c1", "email": "ann@shop.example", "first_name": "Ann",
            "last_name": "Lee", "is_opt_in": False, "is_newsletter_subscribed": False,
            "lang": "en", "is_active": True, "created_at": STAMP, "updated_at": STAMP}
ORDER = {"order_id": "1", "lang": "en", "status_id": "paid", "cart_id": "c", "amount": 1.0,
         "customer": {"customer_id": "c1", "email": "ann@shop.example", "created_at": STAMP},
         "products": [], "cart_updated_at": STAMP, "amount_without_tax": 1.0,
         "shipping_costs": 0.0, "shipping_costs_without_tax": 0.0, "currency": "EUR",
         "is_confirmed": True, "created_at": STAMP, "updated_at": STAMP}
CART = {"cart_id": "c", "email": "ann@shop.example", "currency": "EUR", "amount": 1.0,
        "products": [], "created_at": STAMP, "updated_at": STAMP, "is_converted": False}


def test_the_examples_are_valid_items():
    assert validate_item(Product, PRODUCT) == []
    assert validate_item(Customer, CUSTOMER) == []
    assert validate_item(Order, ORDER) == []
    assert validate_item(Cart, CART) == []


@pytest.mark.parametrize(("model", "item", "field"), [
    (Customer, {**CUSTOMER, "email": "ann@shop.example\n"}, "email"),
    (Order, {**ORDER, "customer": {**ORDER["customer"], "email": "ann@shop.example\n"}},
     "customer.email"),
    (Cart, {**CART, "email": "ann@shop.example\n"}, "email"),
    (Customer, {**CUSTOMER, "lang": "en\n"}, "lang"),
    (Product, {**PRODUCT, "currency": "EUR\n"}, "currency"),
])
def test_a_value_with_a_trailing_newline_does_not_match_a_pattern(model, item, field):
    """``^…$`` with ``re.match`` lets ``"x\\n"`` through: every pattern is matched whole."""
    assert [r for r in validate_item(model, item) if r.startswith(f"{field}:")]


@pytest.mark.parametrize("price", [float("inf"), float("-inf"), float("nan"), "Infinity", "NaN"])
def test_an_amount_is_a_finite_number(price: Any):
    assert validate_item(Product, {**PRODUCT, "price": price}) == [
        "price: Input should be a finite number"]


@pytest.mark.parametrize(("field", "value"), [
    ("quantity_remaining", 2**63), ("quantity_remaining", -(2**63) - 1), ("product_id", 2**63)])
def test_an_integer_is_within_the_64_bits_the_api_holds(field: str, value: int):
    assert validate_item(Product, {**PRODUCT, field: value}) != []
    assert validate_item(Product, {**PRODUCT, field: 2**63 - 1}) == []


def test_a_timestamp_must_lie_within_the_calendar_once_in_utc():
    (reason,) = validate_item(Product, {**PRODUCT, "updated_at": "9999-12-31T23:59:59-14:00"})
    assert reason.startswith("updated_at:") and "range of dates" in reason


# JSON from platforms -----------------------------------------------------------------------

def test_integers_past_64_bits_stay_whole_and_apart():
    body = b'{"orders": [{"id": 123456789012345678901}, {"id": 123456789012345678902}]}'

    ids = [o["id"] for o in loads(body)["orders"]]

    assert ids == [123456789012345678901, 123456789012345678902]
    assert orjson.loads(body)["orders"][0]["id"] == orjson.loads(body)["orders"][1]["id"]


@pytest.mark.parametrize("body", [b'{"price": NaN}', b'{"price": Infinity}',
                                  b'{"id": 1234567890123456789012, "price": 1e400}',
                                  b'{"id": 1234567890123456789012, "price": -Infinity}',
                                  b'{"id": 12345678901234567890123, "name": "Caf\xe9"}'])
def test_what_is_not_json_is_refused_as_orjson_refuses_it(body: bytes):
    with pytest.raises(orjson.JSONDecodeError):
        loads(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@given(json_values)
def test_any_json_reads_back_as_it_was_written(value: Any):
    assert loads(json.dumps(value).encode()) == value
