"""HTTP plumbing shared by the sandbox's route modules: JSON in and out, keys, query strings.

Every dependency here is ``async``, as is every route: FastAPI runs a plain ``def`` in a
worker thread, beside the event loop, and the store is not made for two threads at once (a
listing iterating a collection while a thread applies writes to it fails, and SQLite's one
connection cannot hold two transactions). On the loop, handlers change state only between
``await``s, one at a time, so no lock is needed and none can be forgotten;
``tests/sandbox/test_concurrency.py`` checks that no route or dependency is a plain ``def``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
import qs_codec
from fastapi import Request
from fastapi.responses import JSONResponse

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import APPLY_SLICE, MAX_INT, json_problems
from sandbox.marketing.listing import run_list_query
from sandbox.marketing.listing_parse import ListQuery
from sandbox.marketing.matching import Record
from sandbox.marketing.settings import GENERAL_KEY_PATTERN, KPI_KEY_PATTERN
from sandbox.marketing.spec.query import OrderBy
from sandbox.marketing.store import Shop, Store

API_KEY_HEADER = "spm-api-key"
#: how the real service's Express stack parses query strings (Node's qs), with room for
#: long IN lists
QS_OPTIONS = qs_codec.DecodeOptions(list_limit=1000, parameter_limit=10000, depth=5)
#: what ``integer`` reads: a sign and at most 20 digits (past 64 bits either way)
_INTEGER = re.compile(r"[+-]?[0-9]{1,20}")


class OrjsonResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


def ok(data: Any) -> dict[str, Any]:
    """The single-resource envelope."""
    return {"statusCode": 200, "data": data}


def store_of(request: Request) -> Store:
    return request.app.state.store


async def _shop(request: Request, *, kpi: bool) -> Shop:
    """The shop of the request's key; an API request (``/v1``) joins its arrivals, when it
    reaches this far (after ``--latency``; not when a fault or its key answered it)."""
    key = request.headers.get(API_KEY_HEADER)
    if not key:
        raise ApiError(401, f"Missing {API_KEY_HEADER} header: every request must carry an API key")
    pattern = KPI_KEY_PATTERN if kpi else GENERAL_KEY_PATTERN
    if not pattern.match(key):
        family = "custom KPI endpoints" if kpi else "this endpoint"
        raise ApiError(401, f"Invalid API key: {family} expect a key matching {pattern.pattern}")
    store = store_of(request)
    shop = store.shop_for(key, kpi=kpi)
    if shop is None:
        raise ApiError(401, "Invalid API key: no shop has this key")
    if request.url.path.startswith("/v1/"):
        shop.arrivals.append(time.time())
    # many writes may have come due at once (a clock moved far): other requests get turns
    while shop.apply_due(store.clock.now(), limit=APPLY_SLICE) == APPLY_SLICE:
        await asyncio.sleep(0)
    return shop


async def shop(request: Request) -> Shop:
    """Dependency: the shop of the request's key (most endpoints)."""
    return await _shop(request, kpi=False)


async def kpi_shop(request: Request) -> Shop:
    """Dependency: the shop of the request's key on the custom KPI endpoints."""
    return await _shop(request, kpi=True)


async def listed(
    request: Request, records: Iterable[Record], q: ListQuery, *, default_order: Sequence[OrderBy]
) -> tuple[list[dict[str, Any]], int]:
    """The page ``q`` asks for and how many records match, within the sandbox's budget of
    work per listing (``run_list_query``)."""
    budget = store_of(request).settings.listing_work_seconds
    return await run_list_query(records, q, default_order=default_order, budget=budget)


def query(request: Request) -> dict[str, Any]:
    """The query string decoded the way the real service decodes it (nested brackets)."""
    return qs_codec.decode(request.url.query, QS_OPTIONS) if request.url.query else {}


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise ApiError(400, "The request needs a JSON body")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"The body is not valid JSON: {exc}") from None
    problems = json_problems(body)
    if problems:
        raise ApiError(400, problems)
    return body


async def json_object(request: Request) -> dict[str, Any]:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, "The body must be a JSON object")
    return body


def integer(raw: Any, name: str, *, low: int = -MAX_INT - 1, high: int = MAX_INT) -> int:
    """An integer from a query string or a path, within ``low``..``high``; else a 400 naming
    ``name`` (Python's ``int()`` takes any length, and a 500 would follow from the encoder)."""
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, str) and _INTEGER.fullmatch(raw.strip()):
        value = int(raw.strip())
    if value is None or not low <= value <= high:
        shown = repr(raw) if len(repr(raw)) <= 40 else repr(raw)[:37] + "..."
        raise ApiError(400, f"{name}: must be an integer from {low} to {high}, got {shown}")
    return value
