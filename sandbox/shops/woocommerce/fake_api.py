"""The fake's own API under ``/__fake__`` (not WooCommerce): lets tests change the shop
between reads, move its clock and make one resource's listing fail. Authenticated like the
REST API, never faulted.

    GET    /__fake__/clock                    {"now": "...", "frozen": bool}
    POST   /__fake__/clock                    {"now": "2025-07-01T12:00:00" | null, "advance": 5}
    GET    /__fake__/stats                    {"requests": n, "throttled": n} on the REST API
    POST   /__fake__/rate-limit               {"tokens": 0}: what --rate-limit leaves the next
                                              REST request (refilling resumes after it)
    GET    /__fake__/{resource}/ids           every id (trash included; ?exclude_status=a,b
                                              leaves those out) and counts by status
    POST   /__fake__/{resource}/{id}/touch    date_modified = now
    POST   /__fake__/{resource}/touch         {"ids": [...], "at": "..."?}: one timestamp for all
    PUT    /__fake__/{resource}/{id}          patch fields (date_modified bumped unless given)
    POST   /__fake__/{resource}               create (fields default to a generated record)
    DELETE /__fake__/{resource}/{id}?force=   as the REST API's DELETE: force=true deletes for
                                              good; without it orders, products, variations
                                              and coupons go to the trash, customers and
                                              categories are refused (501)
    POST   /__fake__/{resource}/fail          {"status": 401}: its listing answers that status
                                              (WordPress's error for it) until cleared, as a
                                              key that lost read access would see
    DELETE /__fake__/{resource}/fail          its listing answers again

Resources: orders, products, variations, customers, coupons, categories. Times without a
zone are GMT. A variation's change bumps its product too.
"""

from __future__ import annotations

from collections import Counter

from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops import hosting
from sandbox.shops.woocommerce.errors import WooError, no_route
from sandbox.shops.woocommerce.http import json_object, require_auth, respond, with_links
from sandbox.shops.woocommerce.settings import FAKE_PREFIX
from sandbox.shops.woocommerce.store import RESOURCES, Store, parse_datetime

router = APIRouter(prefix=FAKE_PREFIX)


def _resource(request: Request, resource: str) -> Store:
    store = require_auth(request, listing=False)
    if resource not in RESOURCES:
        raise no_route()
    return store


def _record(request: Request, store: Store, resource: str, record_id: int) -> dict:
    row = store.tables[resource].row(record_id)
    return with_links(request, resource, row, store.record(resource, row))


def _gmt(value: object) -> int:
    try:
        return parse_datetime(str(value))[0]
    except ValueError:
        raise WooError(400, "fake_invalid_date", f"Not an ISO-8601 date: {value!r}") from None


@router.get("/clock")
async def get_clock(request: Request) -> Response:
    store = require_auth(request, listing=False)
    return respond({"now": store.gmt_text(store.now()), "frozen": store.frozen_now is not None})


@router.post("/clock")
async def set_clock(request: Request) -> Response:
    """Freeze the clock at ``now`` (null: back to the wall clock), then ``advance`` it."""
    store = require_auth(request, listing=False)
    store.move(await json_object(request), _gmt)
    return respond({"now": store.gmt_text(store.now()), "frozen": store.frozen_now is not None})


@router.get("/stats")
async def stats(request: Request) -> Response:
    """REST API requests seen, and those the rate limit refused (429): what a benchmark
    reads to tell how hard a sync pressed the host."""
    require_auth(request, listing=False)
    return respond(hosting.request_stats(request.app.state.counters))


@router.post("/rate-limit")
async def drain_rate_limit(request: Request) -> Response:
    """Drain the rate limit: the next REST request meets ``tokens`` (0: it is refused)."""
    require_auth(request, listing=False)
    try:
        return respond(hosting.drain_rate_limit(request.app.state.rate_limit,
                                                await json_object(request)))
    except ValueError as exc:
        raise WooError(400, "fake_rate_limit", str(exc)) from None


@router.get("/{resource}/ids")
async def ids(request: Request, resource: str) -> Response:
    store = _resource(request, resource)
    excluded = set(filter(None, request.query_params.get("exclude_status", "").split(",")))
    rows = [r for r in store.tables[resource].rows.values() if r.status not in excluded]
    return respond({"ids": [r.id for r in rows],
                    "statuses": dict(Counter(r.status or r.kind for r in rows))})


@router.post("/{resource}/touch")
async def touch_many(request: Request, resource: str) -> Response:
    store = _resource(request, resource)
    body = await json_object(request)
    at = _gmt(body["at"]) if body.get("at") else store.now()
    touched = [store.touch(resource, int(i), at).id for i in body.get("ids", [])]
    return respond({"touched": touched, "date_modified_gmt": store.gmt_text(at)})


@router.post("/{resource}/fail")
async def fail(request: Request, resource: str) -> Response:
    """Make the resource's listing answer ``status`` from now on: a step that reads it fails,
    the others run (what a failed run must show)."""
    store = _resource(request, resource)
    status = (await json_object(request)).get("status")
    if not isinstance(status, int) or not 400 <= status <= 599:
        raise WooError(400, "fake_invalid_status", f"status must be 400 to 599, not {status!r}")
    store.failing[resource] = status
    return respond({"resource": resource, "failing": status})


@router.delete("/{resource}/fail")
async def clear_failure(request: Request, resource: str) -> Response:
    store = _resource(request, resource)
    store.failing.pop(resource, None)
    return respond({"resource": resource, "failing": None})


@router.post("/{resource}/{record_id:int}/touch")
async def touch(request: Request, resource: str, record_id: int) -> Response:
    store = _resource(request, resource)
    store.touch(resource, record_id)
    return respond(_record(request, store, resource, record_id))


@router.put("/{resource}/{record_id:int}")
async def patch(request: Request, resource: str, record_id: int) -> Response:
    store = _resource(request, resource)
    store.patch(resource, record_id, await json_object(request))
    return respond(_record(request, store, resource, record_id))


@router.post("/{resource}")
async def create(request: Request, resource: str) -> Response:
    store = _resource(request, resource)
    row = store.create(resource, await json_object(request))
    return respond(_record(request, store, resource, row.id), status=201)


@router.delete("/{resource}/{record_id:int}")
async def delete(request: Request, resource: str, record_id: int) -> Response:
    store = _resource(request, resource)
    force = request.query_params.get("force", "").lower() in ("1", "true")
    row, record = store.delete(resource, record_id, force=force)
    return respond(with_links(request, resource, row, record))
