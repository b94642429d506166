"""The fake's own API under ``/__fake__`` (not Shopify; the shared routes are
``sandbox.shops.control``'s): change the shop between reads, move its clock, read its
counters and inject bulk failures. It takes the same ``X-Shopify-Access-Token`` as the Admin
API and is never faulted. What is Shopify's own:

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
    POST   /__fake__/{resource}/{id}/touch  updatedAt = now
    PUT    /__fake__/{resource}/{id}        patch GraphQL fields (updatedAt bumped unless given)
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

from sandbox.shops.control import Control, Endpoint, FakeError
from sandbox.shops.hosting import FAKE_PREFIX
from sandbox.shops.shopify.bulk import FAULTS, BulkOperation
from sandbox.shops.shopify.data import BASE
from sandbox.shops.shopify.records import iso
from sandbox.shops.shopify.store import RESOURCES, NotFound, Store
from sandbox.shops.timeline import epoch_of


class ShopifyControl(Control):
    resources = RESOURCES
    stamp_field = "updatedAt"
    record_path = "{record_id}"
    rate_limited = False
    hosted = False

    def authorize(self, request: Request) -> None:
        token = request.headers.get("x-shopify-access-token", "")
        if not hmac.compare_digest(token.encode(), request.app.state.store.settings.token.encode()):
            raise FakeError(401, "the /__fake__ API takes the shop's access token")

    async def body(self, request: Request) -> dict[str, Any]:
        raw = await request.body()
        body = orjson.loads(raw) if raw.strip() else {}
        if not isinstance(body, dict):
            raise self.not_object()
        return body

    def parse_time(self, store: Store, value: Any) -> int:
        return epoch_of(str(value), store.tz)

    def time_text(self, store: Store, epoch: int) -> Any:
        return iso(epoch)

    def stats(self, request: Request, store: Store) -> dict[str, Any]:
        return {**store.stats, "bucket": store.bucket.status()}

    def create(self, store: Store, resource: str, fields: dict[str, Any]) -> int:
        if resource == "events":  # an event names the record it tells of: a deletion makes it
            raise FakeError(400, "events are made by deleting a record: DELETE"
                                 " /__fake__/{resource}/{id} adds its destroy event")
        return super().create(store, resource, fields)

    def touch_many(self, store: Store, resource: str, ids: list[Any], at: int) -> list[int]:
        touched = super().touch_many(store, resource, ids, at)
        store.version += 1
        return touched

    def delete(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        before = self.view(request, store, resource, record_id)
        store.delete(resource, record_id)
        return before

    def guard(self, endpoint: Endpoint) -> Endpoint:
        """Errors become ``{"error": ...}`` here rather than reaching the GraphQL app's."""

        @functools.wraps(endpoint)
        async def wrapped(request: Request, **kwargs: Any) -> Response:
            try:
                response: Response = await endpoint(request, **kwargs)
                return response
            except FakeError as exc:
                return self.respond({"error": str(exc)}, exc.status)
            except NotFound as exc:
                return self.respond({"error": f"not found: {exc}"}, 404)
            except (ValueError, orjson.JSONDecodeError) as exc:
                return self.respond({"error": str(exc)}, 400)

        return wrapped


CONTROL = ShopifyControl()
router = APIRouter(prefix=FAKE_PREFIX)


@router.post("/bucket")
@CONTROL.guard
async def bucket(request: Request) -> Response:
    store = CONTROL.store(request)
    body = await CONTROL.body(request)
    store.bucket.drain(float(body.get("available", 0)))
    return CONTROL.respond(store.bucket.status())


@router.post("/bulk/faults")
@CONTROL.guard
async def bulk_faults(request: Request) -> Response:
    store = CONTROL.store(request)
    faults = (await CONTROL.body(request)).get("faults") or []
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        raise FakeError(400, f"unknown faults {unknown}; known: {', '.join(FAULTS)}")
    store.bulk_faults = list(faults)
    return CONTROL.respond({"faults": store.bulk_faults})


@router.post("/bulk/occupy")
@CONTROL.guard
async def occupy(request: Request) -> Response:
    store = CONTROL.store(request)
    body = await CONTROL.body(request)
    polls = body.get("polls")
    if polls is not None and (isinstance(polls, bool) or not isinstance(polls, int) or polls < 1):
        raise FakeError(400, f"polls must be a whole number from 1, got {polls!r}")
    operation_id = max(store.bulk, default=BASE["bulk"]) + 1
    store.bulk[operation_id] = BulkOperation(
        operation_id, str(body.get("query") or "{ products { edges { node { id } } } }"),
        store.now(), time.monotonic(), math.inf, [], 0, str(request.base_url).rstrip("/"),
        polls=polls)
    return CONTROL.respond(store.bulk[operation_id].record())


CONTROL.install(router)
