"""The fake's own API under ``/__fake__`` (not Magento): lets tests change the shop between
reads and move its clock. Takes the same bearer token (the integration token always works
here), never faulted nor rate limited.

    GET    /__fake__/clock                    {"now": "...", "frozen": bool}
    POST   /__fake__/clock                    {"now": "2025-07-01 12:00:00" | null, "advance": 5}
    GET    /__fake__/stats                    {"requests": n, "throttled": n} on the REST API
    POST   /__fake__/rate-limit               {"tokens": 0}: what --rate-limit leaves the next
                                              REST request (refilling resumes after it)
    GET    /__fake__/{resource}/ids           every id
    POST   /__fake__/{resource}/{id}/touch    updated_at = now
    POST   /__fake__/{resource}/touch         {"ids": [...], "at": "..."?}: one timestamp for all
    PUT    /__fake__/{resource}/{id}          patch fields (updated_at = now unless given)
    POST   /__fake__/{resource}               create (an order brings its ordered quote)
    DELETE /__fake__/{resource}/{id}          delete for good

Resources: orders, customers, products, carts, categories. Times without a zone are UTC.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops import hosting
from sandbox.shops.magento.errors import MagentoError, no_route, not_authorized
from sandbox.shops.magento.records import utc_text
from sandbox.shops.magento.settings import FAKE_PREFIX
from sandbox.shops.magento.store import RESOURCES, Store, parse_time

router = APIRouter(prefix=FAKE_PREFIX)


def _respond(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status,
                    media_type="application/json; charset=utf-8")


def _store(request: Request, resource: str | None = None) -> Store:
    store: Store = request.app.state.store
    token = request.scope.get("state", {}).get("token")
    if not token or not store.token_valid(token, fake_api=True):
        raise not_authorized("Magento_Backend::admin")
    if resource is not None and resource not in RESOURCES:
        raise no_route()
    return store


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise MagentoError(400, "Decoding error: %1", ["Syntax error"]) from None
    if not isinstance(body, dict):
        raise MagentoError(400, "The body must be a JSON object.")
    return body


def _record(store: Store, resource: str, record_id: int) -> dict[str, Any]:
    return store.record(resource, store.tables[resource].row(record_id))


@router.get("/clock")
async def get_clock(request: Request) -> Response:
    store = _store(request)
    return _respond({"now": utc_text(store.now()), "frozen": store.frozen_now is not None})


@router.post("/clock")
async def set_clock(request: Request) -> Response:
    """Freeze the clock at ``now`` (null: back to the wall clock), then ``advance`` it."""
    store = _store(request)
    store.move(await _body(request), parse_time)
    return _respond({"now": utc_text(store.now()), "frozen": store.frozen_now is not None})


@router.get("/stats")
async def stats(request: Request) -> Response:
    _store(request)
    return _respond(hosting.request_stats(request.app.state.counters))


@router.post("/rate-limit")
async def drain_rate_limit(request: Request) -> Response:
    """Drain the rate limit: the next REST request meets ``tokens`` (0: it is refused)."""
    _store(request)
    try:
        return _respond(hosting.drain_rate_limit(request.app.state.rate_limit,
                                                 await _body(request)))
    except ValueError as exc:
        raise MagentoError(400, str(exc)) from None


@router.get("/{resource}/ids")
async def ids(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    return _respond({"ids": list(store.tables[resource].rows)})


@router.post("/{resource}/touch")
async def touch_many(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    body = await _body(request)
    at = parse_time(body["at"]) if body.get("at") else store.now()
    touched = [store.touch(resource, int(i), at).id for i in body.get("ids", [])]
    return _respond({"touched": touched, "updated_at": utc_text(at)})


@router.post("/{resource}/{record_id:int}/touch")
async def touch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    store.touch(resource, record_id)
    return _respond(_record(store, resource, record_id))


@router.put("/{resource}/{record_id:int}")
async def patch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    store.patch(resource, record_id, await _body(request))
    return _respond(_record(store, resource, record_id))


@router.post("/{resource}")
async def create(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    row = store.create(resource, await _body(request))
    return _respond(_record(store, resource, row.id), status=201)


@router.delete("/{resource}/{record_id:int}")
async def delete(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    store.delete(resource, record_id)
    return _respond({"deleted": record_id})
