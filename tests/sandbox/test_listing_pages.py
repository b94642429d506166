"""The listing engine's pages: field projection, order, pagination and the list envelope."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest

from sandbox.marketing.listing import apply_list_query, list_envelope
from sandbox.marketing.listing_parse import ListQuery, parse_list_query
from sandbox.marketing.spec.query import MAX_LIMIT, OrderBy
from tests.sandbox.listing_queries import (
    ALLOWED,
    RECORDS,
    by_hand,
    decode,
    ids,
    json_encoded,
    run,
)


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
