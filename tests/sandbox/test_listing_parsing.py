"""How the listing engine reads a query: what a query string is parsed into, and how a bad
one is refused with a 400 that names every problem at once."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import MAX_OFFSET
from sandbox.marketing.listing_parse import ListQuery, parse_list_query
from sandbox.marketing.spec.query import Filter, Operator, OrderBy
from tests.sandbox.listing_queries import (
    ALLOWED,
    bracket_encoded,
    by_hand,
    criterion,
    decode,
    errors_of,
    json_encoded,
)

LIMIT_RANGE = "limit must be an integer between 1 and 1000"
OFFSET_RANGE = f"offset must be an integer between 0 and {MAX_OFFSET}"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param("limit=0", f"{LIMIT_RANGE}, got '0'", id="limit-0"),
        pytest.param("limit=-3", f"{LIMIT_RANGE}, got '-3'", id="limit-negative"),
        pytest.param("limit=1001", f"{LIMIT_RANGE}, got '1001'", id="limit-above-max"),
        pytest.param("limit=ten", f"{LIMIT_RANGE}, got 'ten'", id="limit-word"),
        pytest.param("limit=2.5", f"{LIMIT_RANGE}, got '2.5'", id="limit-decimal"),
        pytest.param("limit=", f"{LIMIT_RANGE}, got ''", id="limit-empty"),
        pytest.param("limit=5&limit=6", f'{LIMIT_RANGE}, got ["5", "6"]', id="limit-twice"),
        pytest.param("offset=-1", f"{OFFSET_RANGE}, got '-1'", id="offset-negative"),
        pytest.param("offset=x", f"{OFFSET_RANGE}, got 'x'", id="offset-word"),
        pytest.param("offset=18446744073709551616", f"{OFFSET_RANGE}, got '18446744073709551616'",
                     id="offset-past-64-bits"),
        pytest.param("offset=" + "9" * 5000, f"{OFFSET_RANGE}, got '{'9' * 76}...",
                     id="offset-past-int-digits"),
    ],
)
def test_bad_limit_or_offset_is_a_400_naming_the_range(query: str, message: str) -> None:
    assert errors_of(query) == [message]


UNKNOWN_FIELD_CASES = [
    pytest.param("fields=id,nope", "fields: unknown field 'nope'", id="fields"),
    pytest.param(
        "order[0][field]=nope&order[0][type]=asc", "order[0]: unknown field 'nope'", id="order"
    ),
    pytest.param(
        by_hand("nope", "EQUALS", "[value]=1"), "filters[0]: unknown field 'nope'", id="filters"
    ),
    pytest.param(
        json_encoded(
            "orFilters", [criterion("lang", "EQUALS", "en"), criterion("nope", "EQUALS", 1)]
        ),
        "orFilters[1]: unknown field 'nope'",
        id="orFilters",
    ),
]


@pytest.mark.parametrize(("query", "start"), UNKNOWN_FIELD_CASES)
def test_unknown_field_is_named_with_the_allowed_list(query: str, start: str) -> None:
    [message] = errors_of(query)
    assert message.startswith(start)
    assert message.endswith("allowed fields: " + ", ".join(ALLOWED))


def test_unknown_field_suggests_a_close_name() -> None:
    [message] = errors_of("fields=emial")
    assert "unknown field 'emial' (did you mean 'email'?)" in message


@pytest.mark.parametrize(
    ("operator", "fragment"),
    [
        pytest.param("SIMILAR", "unknown operator 'SIMILAR'", id="made-up"),
        pytest.param(
            "equals",
            "unknown operator 'equals' (operators are uppercase: 'EQUALS')",
            id="lowercase",
        ),
        pytest.param("", "missing operator", id="empty"),
    ],
)
def test_unknown_operator_is_named_with_the_valid_ones(operator: str, fragment: str) -> None:
    [message] = errors_of(by_hand("lang", operator, "[value]=en"))
    assert message.startswith(f"filters[0]: {fragment}")
    assert message.endswith("valid operators: " + ", ".join(Operator))


@pytest.mark.parametrize(
    ("crit", "message"),
    [
        pytest.param(
            criterion("lang", "EQUALS", ["en", "fr"]),
            "filters[0]: EQUALS takes a single value, got 2",
            id="single-value-operator-given-two",
        ),
        pytest.param(
            criterion("amount", "BETWEEN", [1]),
            "filters[0]: BETWEEN needs exactly 2 values, got 1",
            id="between-one",
        ),
        pytest.param(
            criterion("amount", "NOT_BETWEEN", "1,2,3"),
            "filters[0]: NOT_BETWEEN needs exactly 2 values, got 3",
            id="not-between-three",
        ),
        pytest.param(
            criterion("lang", "IN", []), "filters[0]: IN needs at least one value", id="in-empty"
        ),
        pytest.param(
            criterion("lang", "NOT_IN", ""),
            "filters[0]: NOT_IN needs at least one value",
            id="not-in-empty-string",
        ),
        pytest.param(
            criterion("amount", "LESS_THAN", None),
            "filters[0]: LESS_THAN cannot compare with null",
            id="comparison-with-null",
        ),
        pytest.param(
            criterion("lang", "EQUALS", {"a": 1}),
            'filters[0]: values must be scalars, got {"a": 1}',
            id="object-value",
        ),
        pytest.param(
            {"operator": "EQUALS", "values": 1}, "filters[0]: missing field", id="no-field"
        ),
        pytest.param(
            {"field": "lang", "operator": "EQUALS"}, "filters[0]: missing values", id="no-values"
        ),
        pytest.param(
            {"field": "lang", "operator": "EQUALS", "value": "en", "values": "en"},
            "filters[0]: give either values or value, not both",
            id="value-and-values",
        ),
    ],
)
def test_malformed_filter_is_a_400(crit: dict[str, Any], message: str) -> None:
    assert errors_of(json_encoded("filters", [crit])) == [message]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param("filters=%7Bfield", "filters[0]: malformed JSON (", id="filters-bad-json"),
        pytest.param("order=created_at", "order[0]: malformed JSON (", id="order-not-json"),
        pytest.param("filters=42", "filters[0]: expected an object, got 42", id="json-not-object"),
        pytest.param(
            "order[0][field]=id&order[0][type]=DESC",
            "order[0]: type must be 'asc' or 'desc' (lowercase), got 'DESC'",
            id="order-uppercase",
        ),
        pytest.param(
            "order[0][field]=id",
            "order[0]: type must be 'asc' or 'desc' (lowercase), missing",
            id="order-no-type",
        ),
        pytest.param(
            by_hand("id", "EQUALS", "[value]=1&filters[0][field]=lang"),
            'filters[0]: field must be a single string, got ["id", "lang"]',
            id="field-twice",
        ),
    ],
)
def test_malformed_criteria_are_400(query: str, message: str) -> None:
    [got] = errors_of(query)
    assert got.startswith(message)


def test_all_problems_are_collected_in_one_error() -> None:
    query = "&".join(
        [
            "limit=0",
            "offset=-1",
            "fields=id,nope",
            "order[0][field]=id&order[0][type]=DESC",
            by_hand("ghost", "equals", "[value]=1"),
            "filters[1][field]=amount&filters[1][operator]=BETWEEN&filters[1][values]=1",
            "orFilters=%7Bbroken",
        ]
    )
    with pytest.raises(ApiError) as caught:
        parse_list_query(decode(query), ALLOWED)
    error = caught.value
    assert [m.split(" ")[0] for m in error.errors] == [
        "limit", "offset", "fields:", "order[0]:", "filters[0]:", "filters[0]:", "filters[1]:",
        "orFilters[0]:",
    ]  # fmt: skip
    assert error.body()["message"] == "; ".join(error.errors)


def test_unknown_top_level_parameters_are_ignored() -> None:
    q = parse_list_query(decode("id_definition=7&foo[bar]=1&limit=3"), ALLOWED)
    assert q == ListQuery(limit=3)


def test_parsed_query_is_typed() -> None:
    query = "&".join(
        [
            bracket_encoded("filters", [criterion("amount", "BETWEEN", [1, 2])]),
            "order[0][field]=id&order[0][type]=desc&fields=id&offset=4",
        ]
    )
    assert parse_list_query(decode(query), ALLOWED) == ListQuery(
        limit=10,
        offset=4,
        fields=["id"],
        order=[OrderBy(field="id", type="desc")],
        filters=[Filter(field="amount", operator=Operator.BETWEEN, values=["1", "2"])],
    )
