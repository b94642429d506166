"""Event listings' ``settings`` parameter: one JSON object carrying limit, offset, order and
filter, read into the same query as the other listings' parameters."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from sandbox.marketing.errors import ApiError
from sandbox.marketing.listing import apply_list_query
from sandbox.marketing.listing_parse import ListQuery, parse_event_settings
from sandbox.marketing.spec.query import Filter, Operator, OrderBy
from tests.sandbox.listing_queries import ALLOWED, DEFAULT_ORDER, RECORDS, decode


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
