"""The fake's own API under ``/__fake__`` (no platform's): lets tests change a shop between
reads, move its clock and drain its rate limit. Every HTTP fake serves these routes; what
they answer (errors, times, the record shown) is the platform's, in its ``fake_api`` module,
which also adds the routes only it has.

    GET    /__fake__/clock                    {"now": "...", "frozen": bool}
    POST   /__fake__/clock                    {"now": "<a time>" | null, "advance": 5}
    GET    /__fake__/stats                    {"requests": n, "throttled": n} on the API
    GET    /__fake__/arrivals                 {"at": [epoch seconds, …]}: when the latest
                                              API requests arrived, oldest first (not
                                              Shopify's, which has no hosting gate)
    POST   /__fake__/rate-limit               {"tokens": 0}: what --rate-limit leaves the next
                                              API request (refilling resumes after it)
    GET    /__fake__/{resource}/ids           every id
    POST   /__fake__/{resource}/{id}/touch    last changed = now
    POST   /__fake__/{resource}/touch         {"ids": [...], "at": "..."?}: one time for all
    PUT    /__fake__/{resource}/{id}          patch fields (last changed = now unless given)
    POST   /__fake__/{resource}               create
    DELETE /__fake__/{resource}/{id}          delete
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops import hosting
from sandbox.shops.web import ShopError

Endpoint = Callable[..., Any]


class FakeError(ShopError):
    """A refusal of ``/__fake__`` on a platform whose errors have no shape of their own
    there: answered ``{"error": message}``."""


class Control(ABC):
    """One platform's answers on ``/__fake__``: a subclass says how a request is let in,
    how errors, bodies and times look, and which record a change answers with; ``install``
    adds the routes. The hooks' defaults are what most fakes do."""

    resources: ClassVar[tuple[str, ...]]
    #: the path parameter of a record id (Shopify's takes any text, then validates it)
    record_path: ClassVar[str] = "{record_id:int}"
    #: whether ``/rate-limit`` is served (Shopify's limit is its cost bucket instead)
    rate_limited: ClassVar[bool] = True
    #: whether the fake runs behind ``hosting.Gate``, which keeps the API's arrival times
    #: (``/__fake__/arrivals``: a fake without it has no such route)
    hosted: ClassVar[bool] = True
    media_type: ClassVar[str] = "application/json"
    #: the field a bulk touch names the time it set in (``stamp``)
    stamp_field: ClassVar[str] = ""

    # the platform's answers -----------------------------------------------------------

    def respond(self, data: Any, status: int = 200) -> Response:
        return Response(orjson.dumps(data), status_code=status, media_type=self.media_type)

    def error(self, status: int, message: str, code: str = "") -> Exception:
        """The platform's error (``code`` names it where the platform's errors have codes)."""
        return FakeError(status, message)

    def authorize(self, request: Request) -> None:
        """Refuse a request without the shop's credentials (default: the gate did)."""
        return None

    def unknown(self, resource: str) -> Exception:
        return self.error(404, f"no resource {resource!r}; resources: {', '.join(self.resources)}")

    def store(self, request: Request, resource: str | None = None) -> Any:
        self.authorize(request)
        if resource is not None and resource not in self.resources:
            raise self.unknown(resource)
        return request.app.state.store

    async def body(self, request: Request) -> dict[str, Any]:
        """The request's JSON object (no body: an empty one)."""
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise self.not_json() from None
        if not isinstance(body, dict):
            raise self.not_object()
        return body

    def not_json(self) -> Exception:
        return self.error(400, "the body is not JSON")

    def not_object(self) -> Exception:
        return self.error(400, "the body must be a JSON object")

    @abstractmethod
    def parse_time(self, store: Any, value: Any) -> int:
        """A time as the platform writes it, in epoch seconds."""

    @abstractmethod
    def time_text(self, store: Any, epoch: int) -> Any:
        """A time as the platform writes it."""

    def stamp(self, store: Any, at: int) -> dict[str, Any]:
        """How a bulk touch says the time it set: its ``stamp_field``."""
        return {self.stamp_field: self.time_text(store, at)}

    def clock(self, store: Any) -> dict[str, Any]:
        return {"now": self.time_text(store, store.now()), "frozen": store.frozen_now is not None}

    def read_clock(self, store: Any) -> dict[str, Any]:
        """What ``GET /clock`` answers (``POST`` answers ``clock``)."""
        return self.clock(store)

    def stats(self, request: Request, store: Any) -> dict[str, Any]:
        counters = request.app.state.counters
        return {"requests": counters["requests"], "throttled": counters["throttled"]}

    def ids(self, request: Request, store: Any, resource: str) -> dict[str, Any]:
        return {"ids": list(store.tables[resource].rows)}

    # changes --------------------------------------------------------------------------

    def exists(self, store: Any, resource: str, record_id: int) -> None:
        """Refuse an unknown id before the body is read (default: the store refuses it)."""
        return None

    def touch(self, store: Any, resource: str, record_id: int, at: int | None = None) -> int:
        return int(store.touch(resource, record_id, at).id)

    def touch_many(self, store: Any, resource: str, ids: list[Any], at: int) -> list[int]:
        return [self.touch(store, resource, int(i), at) for i in ids]

    def patch(self, store: Any, resource: str, record_id: int, fields: dict[str, Any]) -> None:
        store.patch(resource, record_id, fields)

    def create(self, store: Any, resource: str, fields: dict[str, Any]) -> int:
        return int(store.create(resource, fields).id)

    def view(self, request: Request, store: Any, resource: str, record_id: int) -> Any:
        """What a change answers: the record as the API shows it (by default)."""
        return store.record(resource, store.tables[resource].row(record_id))

    @abstractmethod
    def delete(self, request: Request, store: Any, resource: str, record_id: int) -> Any:
        """Delete as the platform does; what the answer says."""

    def guard(self, endpoint: Endpoint) -> Endpoint:
        """Wrap each route (default: errors reach the app's handlers as they are)."""
        return endpoint

    # the routes -----------------------------------------------------------------------

    def install(self, router: APIRouter) -> APIRouter:
        """Add the shared routes after those ``router`` already has (a platform's own)."""
        record = f"/{{resource}}/{self.record_path}"
        routes: list[tuple[str, str, Endpoint]] = [
            ("GET", "/clock", self._get_clock), ("POST", "/clock", self._set_clock),
            ("GET", "/stats", self._stats)]
        if self.hosted:
            routes.append(("GET", "/arrivals", self._arrivals))
        if self.rate_limited:
            routes.append(("POST", "/rate-limit", self._drain))
        routes += [("GET", "/{resource}/ids", self._ids),
                   ("POST", "/{resource}/touch", self._touch_many),
                   ("POST", f"{record}/touch", self._touch),
                   ("PUT", record, self._patch), ("POST", "/{resource}", self._create),
                   ("DELETE", record, self._delete)]
        for method, path, endpoint in routes:
            router.add_api_route(path, self.guard(endpoint), methods=[method])
        return router

    async def _get_clock(self, request: Request) -> Response:
        return self.respond(self.read_clock(self.store(request)))

    async def _set_clock(self, request: Request) -> Response:
        """Freeze the clock at ``now`` (null: back to the wall clock), then ``advance`` it."""
        store = self.store(request)
        store.move(await self.body(request), lambda value: self.parse_time(store, value))
        return self.respond(self.clock(store))

    async def _stats(self, request: Request) -> Response:
        """API requests seen, and those the rate limit refused (429): what a benchmark reads
        to tell how hard a sync pressed the host."""
        return self.respond(self.stats(request, self.store(request)))

    async def _arrivals(self, request: Request) -> Response:
        """When the latest API requests arrived (epoch seconds): what a test of a request
        budget shared by several processes reads the spacing from."""
        self.store(request)
        return self.respond({"at": list(request.app.state.arrivals)})

    async def _drain(self, request: Request) -> Response:
        """Drain the rate limit (``TokenBucket.drain``): the next API request meets
        ``tokens`` (0: it is refused), however late it comes."""
        self.store(request)
        tokens = (await self.body(request)).get("tokens", 0)
        bucket: hosting.TokenBucket | None = request.app.state.rate_limit
        if bucket is None:
            problem = "the fake has no rate limit: start it with --rate-limit"
        elif isinstance(tokens, bool) or not isinstance(tokens, int | float):
            problem = f"tokens must be a number, got {tokens!r}"
        else:
            bucket.drain(float(tokens))
            return self.respond({"tokens": bucket.tokens, "capacity": bucket.capacity,
                                 "rate": bucket.rate})
        raise self.error(400, problem, "fake_rate_limit")

    async def _ids(self, request: Request, resource: str) -> Response:
        return self.respond(self.ids(request, self.store(request, resource), resource))

    async def _touch_many(self, request: Request, resource: str) -> Response:
        store = self.store(request, resource)
        body = await self.body(request)
        at = self.parse_time(store, body["at"]) if body.get("at") else store.now()
        touched = self.touch_many(store, resource, body.get("ids", []), at)
        return self.respond({"touched": touched, **self.stamp(store, at)})

    async def _touch(self, request: Request, resource: str, record_id: int) -> Response:
        store = self.store(request, resource)
        self.touch(store, resource, record_id)
        return self.respond(self.view(request, store, resource, record_id))

    async def _patch(self, request: Request, resource: str, record_id: int) -> Response:
        store = self.store(request, resource)
        self.exists(store, resource, record_id)
        self.patch(store, resource, record_id, await self.body(request))
        return self.respond(self.view(request, store, resource, record_id))

    async def _create(self, request: Request, resource: str) -> Response:
        store = self.store(request, resource)
        record_id = self.create(store, resource, await self.body(request))
        return self.respond(self.view(request, store, resource, record_id), 201)

    async def _delete(self, request: Request, resource: str, record_id: int) -> Response:
        store = self.store(request, resource)
        return self.respond(self.delete(request, store, resource, record_id))
