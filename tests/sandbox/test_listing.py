"""The sandbox's listing engine, driven through real query strings.

Each query string is built the way a client builds it (one JSON object per repeated
parameter, or bracket notation as Node's ``qs`` / axios write it), decoded with
``qs_codec`` exactly as the sandbox's HTTP layer decodes it, then parsed and applied.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest
import qs_codec
from qs_codec import DecodeOptions, EncodeOptions, ListFormat

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import MAX_OFFSET
from sandbox.marketing.listing import (
    ListQuery,
    apply_list_query,
    list_envelope,
    parse_event_settings,
    parse_list_query,
    record_filter,
)
from sandbox.marketing.spec.query import MAX_LIMIT, Filter, Operator, OrderBy

DECODE = DecodeOptions(list_limit=1000)
ALLOWED = [
    "id", "email", "first_name", "amount", "is_active", "created_at", "group_ids", "lang", "note",
]  # fmt: skip
DEFAULT_ORDER = [OrderBy(field="id", type="asc")]

RECORDS: list[dict[str, Any]] = [
    {
        "id": 1, "email": "ann@shop.test", "first_name": "Ann", "amount": 9, "is_active": True,
        "created_at": "2024-01-05T10:00:00Z", "group_ids": ["vip", "b2b"], "lang": "en",
        "note": "50% off_today",
    },
    {
        "id": 2, "email": "bob@shop.test", "first_name": "Bob", "amount": 10, "is_active": False,
        "created_at": "2024-02-01T00:00:00+01:00", "group_ids": [], "lang": "fr", "note": None,
    },
    {
        "id": 3, "email": "CARL@Example.com", "first_name": "Carl", "amount": 100.5,
        "is_active": True, "created_at": "2024-03-10T12:30:00.000Z", "group_ids": ["vip"],
        "lang": None, "note": "5000 off",
    },
    {
        "id": 4, "email": "dee@shop.test", "first_name": None, "amount": None, "is_active": None,
        "created_at": None, "group_ids": None, "lang": "en", "note": "Ann's friend, maybe",
    },
    {
        "id": 5, "email": "anna@shop.test", "first_name": "Anna", "amount": -1, "is_active": True,
        "created_at": "2023-12-31T23:59:59Z", "group_ids": ["b2b"], "lang": "de",
        "note": "(50%) off",
    },
]  # fmt: skip


def json_encoded(param: str, criteria: list[dict[str, Any]]) -> str:
    """One JSON object per repeated parameter, as the spec's first encoding shows."""
    return "&".join(f"{param}={quote(json.dumps(c))}" for c in criteria)


def bracket_encoded(param: str, criteria: list[dict[str, Any]]) -> str:
    """Bracket notation as ``qs.stringify`` writes it; null travels as the string "null"."""

    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [plain(v) for v in value]
        return "null" if value is None else value

    items = [{k: plain(v) for k, v in c.items()} for c in criteria]
    return qs_codec.encode({param: items}, EncodeOptions(list_format=ListFormat.INDICES))


ENCODINGS = {"json": json_encoded, "bracket": bracket_encoded}


def decode(query: str) -> dict[str, Any]:
    return qs_codec.decode(query, DECODE)


def run(query: str, records: list[dict[str, Any]] = RECORDS) -> tuple[list[dict[str, Any]], int]:
    q = parse_list_query(decode(query), ALLOWED)
    return apply_list_query(records, q, default_order=DEFAULT_ORDER)


def ids(query: str) -> list[int]:
    page, _ = run(f"limit={MAX_LIMIT}&{query}")
    return [r["id"] for r in page]


def errors_of(query: str) -> list[str]:
    with pytest.raises(ApiError) as caught:
        parse_list_query(decode(query), ALLOWED)
    assert caught.value.status_code == 400
    return caught.value.errors


def criterion(field: str, operator: str, values: Any) -> dict[str, Any]:
    return {"field": field, "operator": operator, "values": values}


def by_hand(field: str, operator: str, rest: str, param: str = "filters") -> str:
    """Bracket notation written by hand, for the forms ``qs.stringify`` does not produce."""
    return f"{param}[0][field]={field}&{param}[0][operator]={operator}&{param}[0]{rest}"


OPERATOR_CASES = [
    pytest.param(criterion("email", "EQUALS", "bob@shop.test"), [2], id="EQUALS-text"),
    pytest.param(criterion("amount", "EQUALS", 10), [2], id="EQUALS-number"),
    pytest.param(criterion("is_active", "EQUALS", True), [1, 3, 5], id="EQUALS-bool"),
    pytest.param(criterion("first_name", "EQUALS", None), [4], id="EQUALS-null"),
    pytest.param(
        criterion("created_at", "EQUALS", "2024-01-31T23:00:00Z"), [2], id="EQUALS-same-instant"
    ),
    pytest.param(criterion("group_ids", "EQUALS", "vip"), [1, 3], id="EQUALS-any-list-element"),
    pytest.param(criterion("lang", "NOT_EQUALS", "en"), [2, 3, 5], id="NOT_EQUALS-keeps-null"),
    pytest.param(criterion("lang", "NOT_EQUALS", None), [1, 2, 4, 5], id="NOT_EQUALS-null"),
    pytest.param(criterion("email", "CONTAINS", "EXAMPLE"), [3], id="CONTAINS-ignores-case"),
    pytest.param(criterion("group_ids", "CONTAINS", "b2"), [1, 5], id="CONTAINS-list-element"),
    pytest.param(criterion("note", "NOT_CONTAINS", "OFF"), [4], id="NOT_CONTAINS-skips-null"),
    pytest.param(criterion("first_name", "STARTS_WITH", "an"), [1, 5], id="STARTS_WITH"),
    pytest.param(criterion("email", "ENDS_WITH", ".COM"), [3], id="ENDS_WITH"),
    pytest.param(criterion("amount", "LESS_THAN", 10), [1, 5], id="LESS_THAN-numeric-9<10"),
    pytest.param(criterion("amount", "LESS_THAN_OR_EQUAL_TO", 10), [1, 2, 5], id="LESS_THAN_OR_EQ"),
    pytest.param(criterion("amount", "GREATER_THAN", 9), [2, 3], id="GREATER_THAN"),
    pytest.param(
        criterion("created_at", "GREATER_THAN", "2024-01-31"), [2, 3], id="GREATER_THAN-datetime"
    ),
    pytest.param(
        criterion("amount", "GREATER_THAN_OR_EQUAL_TO", 100.5), [3], id="GREATER_THAN_OR_EQ"
    ),
    pytest.param(criterion("lang", "IN", ["en", "de"]), [1, 4, 5], id="IN"),
    pytest.param(criterion("lang", "IN", ["fr", None]), [2, 3], id="IN-with-null"),
    pytest.param(criterion("id", "IN", [1, 3]), [1, 3], id="IN-numbers"),
    pytest.param(criterion("group_ids", "IN", ["b2b", "x"]), [1, 5], id="IN-list-field"),
    pytest.param(criterion("lang", "NOT_IN", ["en"]), [2, 3, 5], id="NOT_IN"),
    pytest.param(criterion("first_name", "LIKE", "a_n%"), [1, 5], id="LIKE-wildcards"),
    pytest.param(criterion("note", "LIKE", "50%"), [1, 3], id="LIKE-percent"),
    pytest.param(criterion("note", "LIKE", "50\\%%"), [1], id="LIKE-escaped-percent"),
    pytest.param(criterion("note", "LIKE", "(50%"), [5], id="LIKE-regex-chars-are-literal"),
    pytest.param(criterion("amount", "BETWEEN", [9, 10]), [1, 2], id="BETWEEN-inclusive"),
    pytest.param(
        criterion("created_at", "BETWEEN", ["2024-01-01", "2024-02-01"]),
        [1, 2],
        id="BETWEEN-datetimes",
    ),
    pytest.param(criterion("amount", "NOT_BETWEEN", [0, 50]), [3, 5], id="NOT_BETWEEN"),
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(("crit", "expected"), OPERATOR_CASES)
def test_every_operator_in_both_encodings(
    encoding: str, crit: dict[str, Any], expected: list[int]
) -> None:
    assert ids(ENCODINGS[encoding]("filters", [crit])) == expected


def test_operator_cases_cover_all_fifteen_operators() -> None:
    covered = {case.values[0]["operator"] for case in OPERATOR_CASES}
    assert covered == set(Operator)


@pytest.mark.parametrize(
    "rest",
    [
        pytest.param("[values]=en,de", id="comma-separated"),
        pytest.param("[values]=en, de", id="comma-with-spaces"),
        pytest.param("[values][]=en&filters[0][values][]=de", id="values[]"),
        pytest.param("[values][0]=en&filters[0][values][1]=de", id="values[i]"),
        pytest.param("[values]=en&filters[0][values]=de", id="repeated"),
        pytest.param("[value]=en,de", id="singular-value"),
    ],
)
def test_multi_values_as_comma_string_or_array(rest: str) -> None:
    assert ids(by_hand("lang", "IN", rest)) == [1, 4, 5]


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(json_encoded("filters", [criterion("lang", "IN", "en,de")]), id="json-comma"),
        pytest.param(
            "filters=" + quote(json.dumps([criterion("lang", "IN", ["en", "de"])])),
            id="json-array-in-one-parameter",
        ),
        pytest.param(
            "filters[0]=" + quote(json.dumps(criterion("lang", "IN", ["en", "de"]))),
            id="json-object-at-index",
        ),
        pytest.param(
            "filters[field]=lang&filters[operator]=IN&filters[values]=en,de", id="bracket-no-index"
        ),
        pytest.param(
            "filters[1500][field]=lang&filters[1500][operator]=IN&filters[1500][values]=en,de",
            id="index-past-list-limit",
        ),
        pytest.param(
            "filters[3][field]=lang&filters[3][operator]=IN&filters[3][values]=en,de",
            id="sparse-index",
        ),
    ],
)
def test_less_common_encodings_of_one_filter(query: str) -> None:
    assert ids(query) == [1, 4, 5]


BOB = "bob@shop.test"


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(by_hand("email", "EQUALS", f"[value]={BOB}"), id="bracket-value"),
        pytest.param(by_hand("email", "EQUALS", f"[values][]={BOB}"), id="bracket-values[]"),
        pytest.param(
            json_encoded("filters", [{"field": "email", "operator": "EQUALS", "value": BOB}]),
            id="json-value",
        ),
        pytest.param(
            json_encoded("filters", [criterion("email", "EQUALS", [BOB])]), id="json-values-[one]"
        ),
    ],
)
def test_single_value_as_value_or_values(query: str) -> None:
    assert ids(query) == [2]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_commas_are_literal_for_single_value_operators(encoding: str) -> None:
    query = ENCODINGS[encoding]("filters", [criterion("note", "CONTAINS", "friend, maybe")])
    assert ids(query) == [4]


@pytest.mark.parametrize(
    ("value", "expected"), [("1", [1, 3, 5]), ("TRUE", [1, 3, 5]), ("0", [2]), ("False", [2])]
)
def test_bool_fields_accept_1_0_and_any_case(value: str, expected: list[int]) -> None:
    assert ids(by_hand("is_active", "EQUALS", f"[value]={value}")) == expected


def test_numbers_held_as_text_compare_as_text() -> None:
    records = [{"id": 1, "note": "9"}, {"id": 2, "note": "10"}]
    page, _ = run(by_hand("note", "LESS_THAN", "[value]=5"), records)
    assert [r["id"] for r in page] == [2]  # "10" < "5" as text, like the database would


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_filters_and_or_filters_combine_as_all_and_any(encoding: str) -> None:
    make = ENCODINGS[encoding]
    query = "&".join(
        [
            make("filters", [criterion("is_active", "EQUALS", True)]),
            make(
                "orFilters",
                [criterion("lang", "EQUALS", "en"), criterion("amount", "GREATER_THAN", 50)],
            ),
        ]
    )
    assert ids(query) == [1, 3]


def test_encodings_mix_across_parameters() -> None:
    query = (
        json_encoded("filters", [criterion("is_active", "EQUALS", True)])
        + "&"
        + (bracket_encoded("orFilters", [criterion("amount", "LESS_THAN", 0)]))
    )
    assert ids(query) == [5]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_or_filters_alone_match_any(encoding: str) -> None:
    query = ENCODINGS[encoding](
        "orFilters", [criterion("lang", "EQUALS", "fr"), criterion("first_name", "EQUALS", "Carl")]
    )
    assert ids(query) == [2, 3]


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("fields=id,email", id="comma-separated"),
        pytest.param("fields=id&fields=email", id="repeated"),
        pytest.param("fields[]=id&fields[]=email", id="brackets"),
        pytest.param("fields[0]=id&fields[1]=email", id="indexed"),
        pytest.param("fields=id, email,&fields=id", id="spaces-trailing-comma-duplicates"),
    ],
)
def test_fields_projection_in_every_form(query: str) -> None:
    page, _ = run(query)
    assert [list(r) for r in page] == [["id", "email"]] * len(RECORDS)
    assert page[0] == {"id": 1, "email": "ann@shop.test"}


def test_without_fields_every_field_is_returned_as_a_copy() -> None:
    page, _ = run("")
    assert page == RECORDS
    assert page[0] is not RECORDS[0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("", [1, 2, 3, 4, 5], id="default-order"),
        pytest.param("order[0][field]=amount&order[0][type]=asc", [4, 5, 1, 2, 3], id="null-first"),
        pytest.param("order[0][field]=amount&order[0][type]=desc", [3, 2, 1, 5, 4], id="null-last"),
        pytest.param("order[0][field]=created_at&order[0][type]=asc", [4, 5, 1, 2, 3], id="time"),
        pytest.param(
            "order[0][field]=lang&order[0][type]=asc&order[1][field]=id&order[1][type]=desc",
            [3, 5, 4, 1, 2],
            id="bracket-two-keys",
        ),
        pytest.param(
            json_encoded(
                "order",
                [{"field": "is_active", "type": "desc"}, {"field": "amount", "type": "desc"}],
            ),
            [3, 1, 5, 2, 4],
            id="json-two-keys",
        ),
        pytest.param(
            # text sorts by code point: upper case first, "ann@" before "anna@"
            "order=" + quote(json.dumps([{"field": "email", "type": "asc"}])),
            [3, 1, 5, 2, 4],
            id="json-array",
        ),
    ],
)
def test_order(query: str, expected: list[int]) -> None:
    assert ids(query) == expected


def test_sort_is_stable_on_equal_keys() -> None:
    records = [{"id": i, "lang": "en" if i % 2 else "fr"} for i in range(10)]
    page, _ = run("limit=10&order[0][field]=lang&order[0][type]=desc", records)
    assert [r["id"] for r in page] == [0, 2, 4, 6, 8, 1, 3, 5, 7, 9]


@pytest.mark.parametrize(
    ("query", "expected_ids", "total"),
    [
        pytest.param("", [1, 2, 3, 4, 5], 5, id="defaults"),
        pytest.param("limit=2", [1, 2], 5, id="first-page"),
        pytest.param("limit=2&offset=4", [5], 5, id="last-partial-page"),
        pytest.param("limit=2&offset=5", [], 5, id="offset-at-end"),
        pytest.param("limit=2&offset=50", [], 5, id="offset-past-end"),
        pytest.param(f"limit={MAX_LIMIT}", [1, 2, 3, 4, 5], 5, id="max-limit"),
        pytest.param(
            "limit=1&offset=1&" + by_hand("is_active", "EQUALS", "[value]=true"),
            [3],
            3,
            id="total-counts-matches-not-page",
        ),
    ],
)
def test_pagination(query: str, expected_ids: list[int], total: int) -> None:
    page, count = run(query)
    assert ([r["id"] for r in page], count) == (expected_ids, total)


@pytest.mark.parametrize(
    ("total", "limit", "offset", "expected"),
    [
        pytest.param(0, 10, 0, (0, 1, False, False, None, None), id="empty"),
        pytest.param(25, 10, 0, (3, 1, False, True, 2, None), id="first-of-three"),
        pytest.param(25, 10, 10, (3, 2, True, True, 3, 1), id="middle"),
        pytest.param(25, 10, 20, (3, 3, True, False, None, 2), id="last"),
        pytest.param(25, 10, 5, (3, 1, True, True, 2, 1), id="unaligned-offset"),
        pytest.param(5, 2, 50, (3, 26, True, False, None, 3), id="past-end-points-back-to-data"),
    ],
)
def test_envelope_pagination_meta(
    total: int, limit: int, offset: int, expected: tuple[Any, ...]
) -> None:
    body = list_envelope([], total, ListQuery(limit=limit, offset=offset))
    meta = body["meta"]["pagination"]
    got = tuple(
        meta[k]
        for k in (
            "total_pages", "current_page", "has_previous_page", "has_next_page",
            "next_page", "previous_page",
        )
    )  # fmt: skip
    assert got == expected
    assert (meta["total_items"], meta["items_per_page"], meta["offset"]) == (total, limit, offset)


def test_envelope_shape() -> None:
    page, total = run("limit=2&offset=2")
    body = list_envelope(page, total, parse_list_query(decode("limit=2&offset=2"), ALLOWED))
    assert body["statusCode"] == 200
    assert body["data"] == page
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body["meta"]["generated_at"])


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


def test_record_filter_is_the_filtering_part_alone() -> None:
    q = parse_list_query(
        {
            "filters": [criterion("is_active", "EQUALS", True)],
            "orFilters": [criterion("lang", "IN", ["en", "de"])],
        },
        ALLOWED,
    )
    assert [r["id"] for r in RECORDS if record_filter(q)(r)] == [1, 5]
    assert all(record_filter(ListQuery())(r) for r in RECORDS)


def event_query(settings: dict[str, Any], fields: str = "") -> ListQuery:
    params = decode(f"settings={quote(json.dumps(settings))}{fields}")
    return parse_event_settings(params.get("settings"), params.get("fields"), ALLOWED)


def test_event_settings_carry_limit_offset_order_filter_and_fields() -> None:
    q = event_query(
        {
            "limit": 2,
            "offset": "1",
            "order": [{"field": "created_at", "type": "desc"}],
            "filter": [
                {"field": "is_active", "operator": "EQUALS", "values": True},
                {"field": "lang", "operator": "IN", "values": "en,de"},
            ],
        },
        "&fields=id&fields=lang",
    )
    assert (q.limit, q.offset, q.fields, q.order) == (
        2, 1, ["id", "lang"], [OrderBy(field="created_at", type="desc")]
    )  # fmt: skip
    page, total = apply_list_query(RECORDS, q, default_order=DEFAULT_ORDER)
    assert (page, total) == ([{"id": 5, "lang": "de"}], 2)


def test_event_settings_accept_singular_value_and_default_when_absent() -> None:
    q = event_query({"filter": [{"field": "lang", "operator": "EQUALS", "value": "fr"}]})
    assert q.filters == [Filter(field="lang", operator=Operator.EQUALS, values=["fr"])]
    assert parse_event_settings(None, None, ALLOWED) == ListQuery()


def test_event_settings_problems_are_collected() -> None:
    with pytest.raises(ApiError) as caught:
        event_query(
            {
                "limit": 0,
                "filters": [],
                "order": [{"field": "id", "type": "ASC"}],
                "filter": [{"field": "nope", "operator": "IN", "values": []}],
            },
            "&fields=ghost",
        )
    messages = caught.value.errors
    assert messages[0] == (
        "settings: unknown keys 'filters'; allowed keys: limit, offset, order, filter"
    )
    assert messages[1] == "settings.limit must be an integer between 1 and 1000, got 0"
    assert messages[2].startswith("fields: unknown field 'ghost'")
    assert messages[3] == "settings.order[0]: type must be 'asc' or 'desc' (lowercase), got 'ASC'"
    assert messages[4].startswith("settings.filter[0]: unknown field 'nope'")
    assert messages[5] == "settings.filter[0]: IN needs at least one value"
    assert len(messages) == 6


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param("{limit:1}", "settings: malformed JSON (", id="bad-json"),
        pytest.param("[1]", "settings must be a JSON object, got [1]", id="not-object"),
    ],
)
def test_event_settings_must_be_a_json_object(settings: str, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_event_settings(settings, None, ALLOWED)
    assert caught.value.errors[0].startswith(message)


def test_a_large_store_sorts_mixed_timestamp_spellings_by_instant() -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    records = [
        {
            "id": i,
            "amount": i % 100,
            # odd rows spelt "+01:00", even rows "Z": text order would interleave them wrongly
            "created_at": (start + timedelta(seconds=i))
            .astimezone(timezone(timedelta(hours=i % 2)))
            .isoformat()
            .replace("+00:00", "Z"),
        }
        for i in range(20_000)
    ]
    q = parse_list_query(decode("limit=3&" + by_hand("amount", "LESS_THAN", "[value]=9")), ALLOWED)
    page, total = apply_list_query(
        records, q, default_order=[OrderBy(field="created_at", type="desc")]
    )
    assert total == 1800
    assert [r["id"] for r in page] == [19_908, 19_907, 19_906]
