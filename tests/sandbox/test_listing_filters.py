"""The listing engine's filters: every operator in both encodings, the ways a client may
spell values and criteria, and how ``filters`` and ``orFilters`` combine."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from sandbox.marketing.listing import record_filter
from sandbox.marketing.listing_parse import ListQuery, parse_list_query
from sandbox.marketing.spec.query import Operator
from tests.sandbox.listing_queries import (
    ALLOWED,
    ENCODINGS,
    RECORDS,
    bracket_encoded,
    by_hand,
    criterion,
    ids,
    json_encoded,
    run,
)

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
