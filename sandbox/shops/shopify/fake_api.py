"""The fake's own API under ``/__fake__`` (not Shopify): change the shop between reads,
move its clock, read its counters and inject bulk failures. It takes the same
``X-Shopify-Access-Token`` as the Admin API and is never faulted.

    GET    /__fake__/clock                  {"now": "...Z", "frozen": bool}
    POST   /__fake__/clock                  {"now": "2025-07-01T12:00:00Z" | null, "advance": 5}
    GET    /__fake__/stats                  requests, throttled, cost spent, bulk jobs, downloads…
    POST   /__fake__/bucket                 {"available": 0}: what the next query finds in the
                                            cost bucket (refilling resumes after it)
    POST   /__fake__/bulk/faults            {"faults": ["timeout", …]}: what the next jobs meet
    POST   /__fake__/bulk/occupy            {"polls": 3, "query": "…"?}: a job of this app
                                            already running (as another run of ours left it);
                                            it completes once its status has been read
                                            ``polls`` times, and without them runs until
                                            cancelled
    GET    /__fake__/{resource}/ids         every id (numeric)
    POST   /__fake__/{resource}/{id}/touch  updatedAt = now
    POST   /__fake__/{resource}/touch       {"ids": [...], "at": "...Z"?}: one timestamp for all
    PUT    /__fake__/{resource}/{id}        patch GraphQL fields (updatedAt bumped unless given)
    POST   /__fake__/{resource}             create
    DELETE /__fake__/{resource}/{id}        delete for good, with a ``destroy`` event

Resources: orders, customers, products, variants, collections, checkouts, discounts, events.
"""

from __future__ import annotations

import functools
import hmac
import math
import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops.shopify.bulk import FAULTS, BulkOperation
from sandbox.shops.shopify.data import BASE
from sandbox.shops.shopify.records import iso
from sandbox.shops.shopify.settings import FAKE_PREFIX
from sandbox.shops.shopify.store import RESOURCES, NotFound, Store, parse_time

router = APIRouter(prefix=FAKE_PREFIX)


class FakeError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def _store(request: Request, resource: str | None = None) -> Store:
    store: Store = request.app.state.store
    token = request.headers.get("x-shopify-access-token", "")
    if not hmac.compare_digest(token.encode(), store.settings.token.encode()):
        raise FakeError(401, "the /__fake__ API takes the shop's access token")
    if resource is not None and resource not in RESOURCES:
        raise FakeError(404, f"no resource {resource!r}; resources: {', '.join(RESOURCES)}")
    return store


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    body = orjson.loads(raw) if raw.strip() else {}
    if not isinstance(body, dict):
        raise FakeError(400, "the body must be a JSON object")
    return body


def _handled(handler: Any) -> Any:
    @functools.wraps(handler)
    async def wrapped(request: Request, **kwargs: Any) -> Response:
        try:
            return await handler(request, **kwargs)
        except FakeError as exc:
            return _json({"error": str(exc)}, exc.status)
        except NotFound as exc:
            return _json({"error": f"not found: {exc}"}, 404)
        except (ValueError, orjson.JSONDecodeError) as exc:
            return _json({"error": str(exc)}, 400)

    return wrapped


def _record(store: Store, resource: str, record_id: int) -> dict[str, Any]:
    return store.record(resource, store.tables[resource].row(record_id))


@router.get("/clock")
@_handled
async def get_clock(request: Request) -> Response:
    store = _store(request)
    return _json({"now": iso(store.now()), "frozen": store.frozen_now is not None})


@router.post("/clock")
@_handled
async def set_clock(request: Request) -> Response:
    store = _store(request)
    store.move(await _body(request), lambda value: parse_time(str(value), store.tz))
    return _json({"now": iso(store.now()), "frozen": store.frozen_now is not None})


@router.get("/stats")
@_handled
async def stats(request: Request) -> Response:
    store = _store(request)
    return _json({**store.stats, "bucket": store.bucket.status()})


@router.post("/bucket")
@_handled
async def bucket(request: Request) -> Response:
    store = _store(request)
    body = await _body(request)
    store.bucket.drain(float(body.get("available", 0)))
    return _json(store.bucket.status())


@router.post("/bulk/faults")
@_handled
async def bulk_faults(request: Request) -> Response:
    store = _store(request)
    faults = (await _body(request)).get("faults") or []
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        raise FakeError(400, f"unknown faults {unknown}; known: {', '.join(FAULTS)}")
    store.bulk_faults = list(faults)
    return _json({"faults": store.bulk_faults})


@router.post("/bulk/occupy")
@_handled
async def occupy(request: Request) -> Response:
    store = _store(request)
    body = await _body(request)
    polls = body.get("polls")
    if polls is not None and (isinstance(polls, bool) or not isinstance(polls, int) or polls < 1):
        raise FakeError(400, f"polls must be a whole number from 1, got {polls!r}")
    operation_id = max(store.bulk, default=BASE["bulk"]) + 1
    store.bulk[operation_id] = BulkOperation(
        operation_id, str(body.get("query") or "{ products { edges { node { id } } } }"),
        store.now(), time.monotonic(), math.inf, [], 0, str(request.base_url).rstrip("/"),
        polls=polls)
    return _json(store.bulk[operation_id].record())


@router.get("/{resource}/ids")
@_handled
async def ids(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    return _json({"ids": list(store.tables[resource].rows)})


@router.post("/{resource}/touch")
@_handled
async def touch_many(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    body = await _body(request)
    at = parse_time(str(body["at"]), store.tz) if body.get("at") else store.now()
    touched = [store.touch(resource, int(i), at).id for i in body.get("ids", [])]
    store.version += 1
    return _json({"touched": touched, "updatedAt": iso(at)})


@router.post("/{resource}/{record_id}/touch")
@_handled
async def touch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    store.touch(resource, record_id)
    return _json(_record(store, resource, record_id))


@router.put("/{resource}/{record_id}")
@_handled
async def patch(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    store.patch(resource, record_id, await _body(request))
    return _json(_record(store, resource, record_id))


@router.post("/{resource}")
@_handled
async def create(request: Request, resource: str) -> Response:
    store = _store(request, resource)
    row = store.create(resource, await _body(request))
    return _json(_record(store, resource, row.id), 201)


@router.delete("/{resource}/{record_id}")
@_handled
async def delete(request: Request, resource: str, record_id: int) -> Response:
    store = _store(request, resource)
    before = _record(store, resource, record_id)
    store.delete(resource, record_id)
    return _json(before)
