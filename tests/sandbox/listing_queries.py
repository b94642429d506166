"""Query strings for the sandbox's listing engine, built and run the way its HTTP layer runs them.

Each query string is built the way a client builds it (one JSON object per repeated
parameter, or bracket notation as Node's ``qs`` / axios write it), decoded with
``qs_codec`` exactly as the sandbox's HTTP layer decodes it, then parsed and applied.
The ``test_listing_*`` modules share these records, encoders and runners.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
import qs_codec
from qs_codec import DecodeOptions, EncodeOptions, ListFormat

from sandbox.marketing.errors import ApiError
from sandbox.marketing.listing import apply_list_query
from sandbox.marketing.listing_parse import parse_list_query
from sandbox.marketing.spec.query import MAX_LIMIT, OrderBy

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

