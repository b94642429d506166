"""The fake's own API under ``/__fake__`` (not PrestaShop): lets tests change the shop
between reads and move its clock. Needs the shop's full key (HTTP Basic), never faulted.

    GET    /__fake__/clock                     {"now": "...Z", "frozen": bool}
    POST   /__fake__/clock                     {"now": "2025-07-01T12:00:00Z" | null, "advance": 5}
    GET    /__fake__/stats                     {"requests": n, "throttled": n}: webservice requests
                                               seen, and those refused by --rate-limit
    POST   /__fake__/rate-limit                {"tokens": 0}: what --rate-limit leaves the next
                                               webservice request (refilling resumes after it)
    POST   /__fake__/webservice                {"enabled": false}: PS_WEBSERVICE off (503, code 22)
    GET    /__fake__/{resource}/ids            every id (?abandoned=1 on carts: carts without
                                               an order; ?customers_only=1 on addresses)
    POST   /__fake__/{resource}/{id}/touch     date_upd = now
    POST   /__fake__/{resource}/touch          {"ids": [...], "at": "...Z"?}: one second for all
    PUT    /__fake__/{resource}/{id}           patch fields (date_upd = now); multilingual ones
                                               as {"1": "...", "2": "..."} by language id
    POST   /__fake__/{resource}                create (orders: {"id_cart": N} orders a cart,
                                               without it a new cart is made too)
    DELETE /__fake__/{resource}/{id}?soft=1    delete, or set deleted=1 where the field exists

Times are UTC: ISO 8601 with ``Z`` or an offset, or naive (taken as UTC). The webservice
shows them in the shop's time zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops import hosting
from sandbox.shops.prestashop.fields import RESOURCES
from sandbox.shops.prestashop.settings import FAKE_PREFIX
from sandbox.shops.prestashop.store import Store

router = APIRouter(prefix=FAKE_PREFIX)


class FakeError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def respond(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def _store(request: Request, resource: str | None = None) -> Store:
    if resource is not None and resource not in RESOURCES:
        raise FakeError(404, f"no resource {resource!r}; resources: {', '.join(RESOURCES)}")
    return request.app.state.store


def _epoch(value: Any) -> int:
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise FakeError(400, f"not an ISO 8601 time: {value!r}") from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise FakeError(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise FakeError(400, "the body must be a JSON object")
    return body


def _row_or_404(store: Store, resource: str, record_id: int) -> None:
    if record_id not in store.tables[resource].rows:
        raise FakeError(404, f"no {resource} {record_id}")


def _touch(store: Store, resource: str, record_id: int, at: int | None = None) -> None:
    _row_or_404(store, resource, record_id)
    try:
        store.touch(resource, record_id, at)
    except ValueError as exc:  # a resource without dates
        raise FakeError(400, str(exc)) from None


def _summary(store: Store, resource: str, record_id: int) -> dict[str, Any]:
    row = store.tables[resource].rows[record_id]
    return {"id": record_id, "date_upd": store.local_text(row.modified),
            "date_upd_utc": _utc(row.modified) if row.modified else None}


@router.get("/clock")
async def get_clock(request: Request) -> Response:
    store = _store(request)
    return respond({"now": _utc(store.now()), "frozen": store.frozen_now is not None,
                    "timezone": store.settings.timezone})


@router.post("/clock")
async def set_clock(request: Request) -> Response:
    """Freeze the clock at ``now`` (null: back to the wall clock), then ``advance`` it."""
    store = _store(request)
    store.move(await _body(request), _epoch)
    return respond({"now": _utc(store.now()), "frozen": store.frozen_now is not None})


@router.get("/stats")
async def stats(request: Request) -> Response:
    """Webservice requests seen, and those the rate limit refused (429)."""
    return respond(hosting.request_stats(request.app.state.counters))


@router.post("/rate-limit")
async def drain_rate_limit(request: Request) -> Response:
    """Drain the rate limit: the next webservice request meets ``tokens`` (0: refused)."""
    try:
        return respond(hosting.drain_rate_limit(request.app.state.rate_limit,
                                                await _body(request)))
    except ValueError as exc:
        raise FakeError(400, str(exc)) from None


@router.post("/webservice")
async def switch(request: Request) -> Response:
    store = _store(request)
    store.webservice_enabled = bool((await _body(request)).get("enabled", True))
    return respond({"enabled": store.webservice_enabled})


@router.get("/{resource}/ids")
async def ids(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    rows = list(store.tables[resource].rows.values())
    if resource == "carts" and request.query_params.get("abandoned"):
        ordered = store.cart_ids_with_orders()
        rows = [r for r in rows if r.id not in ordered]
    if resource == "addresses" and request.query_params.get("customers_only"):
        rows = [r for r in rows if r.customer]
    return respond({"ids": [r.id for r in rows]})


@router.post("/{resource}/touch")
async def touch_many(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    body = await _body(request)
    at = _epoch(body["at"]) if body.get("at") else store.now()
    touched = []
    for record_id in body.get("ids", []):
        _touch(store, resource, int(record_id), at)
        touched.append(int(record_id))
    return respond({"touched": touched, "date_upd": store.local_text(at), "date_upd_utc": _utc(at)})


@router.post("/{resource}/{record_id:int}/touch")
async def touch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    _touch(store, resource, record_id)
    return respond(_summary(store, resource, record_id))


@router.put("/{resource}/{record_id:int}")
async def patch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    _row_or_404(store, resource, record_id)
    store.patch(resource, record_id, await _body(request))
    return respond(_summary(store, resource, record_id))


@router.post("/{resource}")
async def create(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    body = await _body(request)
    if resource == "orders" and body.get("id_cart"):
        cart = int(body["id_cart"])
        _row_or_404(store, "carts", cart)
        if cart in store.cart_ids_with_orders():
            raise FakeError(409, f"cart {cart} already has an order")
    row = store.create(resource, body)
    return respond(_summary(store, resource, row.id), 201)


@router.delete("/{resource}/{record_id:int}")
async def delete(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    _row_or_404(store, resource, record_id)
    soft = request.query_params.get("soft") in ("1", "true")
    try:
        store.delete(resource, record_id, soft=soft)
    except ValueError as exc:
        raise FakeError(400, str(exc)) from None
    return respond({"id": record_id, "deleted": "soft" if soft else "gone"})
