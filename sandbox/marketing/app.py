"""The sandbox Marketing API as an ASGI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from sandbox.marketing.allow import allowed_methods
from sandbox.marketing.answers import Answer, Moment, single
from sandbox.marketing.errors import ApiError, validated
from sandbox.marketing.faults import FaultInjection
from sandbox.marketing.guards import BodyGuard
from sandbox.marketing.http import OrjsonResponse, json_object, ok, shop
from sandbox.marketing.limits import ARRIVALS_KEPT, CLOCK_END, MAX_CLOCK_ADVANCE
from sandbox.marketing.openapi import describe, documented
from sandbox.marketing.persistence import InMemory, SqliteFile
from sandbox.marketing.routes import (
    contacts,
    custom_data,
    custom_data_records,
    data_sources,
    events,
    kpis,
    shop_connection,
    sync,
)
from sandbox.marketing.settings import SandboxSettings
from sandbox.marketing.store import Shop, Store

OPENAPI_PATH = "/openapi.json"


class ClockMove(BaseModel):
    """The body of ``POST /_sandbox/clock``."""

    advance: float = Field(ge=0, le=MAX_CLOCK_ADVANCE,
                           description="seconds to move the sandbox's clock forward")


class Now(Answer):
    """Where the manual clock stands."""

    now: Moment


class Writes(Answer):
    accepted: int
    rejected: int
    dropped: int


class Stats(Answer):
    writes: dict[str, Writes] = Field(description="per resource written to")
    stored: dict[str, int] = Field(description="items stored, per resource")
    pending: int = Field(description="writes accepted and not yet visible")


class StatsAnswer(Answer):
    """What this shop's writes became."""

    statusCode: Literal[200]
    data: Stats


class Arrivals(Answer):
    """When this shop's latest API requests arrived."""

    at: list[float] = Field(description="epoch seconds, oldest first: the latest"
                                        f" {ARRIVALS_KEPT:,} requests to /v1 of this key")


def create_app(settings: SandboxSettings | None = None) -> FastAPI:
    settings = settings or SandboxSettings()
    persistence = SqliteFile(settings.data) if settings.data else InMemory()
    store = Store(settings, persistence)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        persistence.close()

    app = FastAPI(
        lifespan=lifespan,
        title="shopsync sandbox: Marketing Automation Data API",
        version="1",
        description=(
            "A local, faithful emulator of the Marketing Automation Data API, with fault"
            " injection. Every /v1 route needs the `spm-api-key` header."
        ),
        openapi_url=OPENAPI_PATH,
        docs_url="/docs",
        redoc_url=None,
        default_response_class=OrjsonResponse,
    )
    app.state.store = store
    # FastAPI's documented way to extend its OpenAPI description is to replace the method;
    # mypy refuses assignments to methods
    app.openapi = lambda: describe(app)  # type: ignore[method-assign]
    app.add_middleware(FaultInjection, store=store)
    # outermost: a body too large or not JSON is refused before anything else runs
    app.add_middleware(BodyGuard)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> OrjsonResponse:
        return OrjsonResponse(exc.body(), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> OrjsonResponse:
        if any(e["loc"][0] == "path" for e in exc.errors()):
            # a value that is no id where the path is another route's (DELETE on
            # /v1/events/histories): the method is what that path does not take
            route = getattr(request.scope.get("route"), "path", None)
            allow = allowed_methods(request.scope, besides=route)
            if allow:
                return await _api_error(request, ApiError(
                    405, "Method Not Allowed", headers={"Allow": ", ".join(allow)}))
        errors = [
            f"{'.'.join(str(p) for p in e['loc'][1:]) or e['loc'][0]}: {e['msg']}"
            for e in exc.errors()
        ]
        return await _api_error(request, ApiError(400, errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> OrjsonResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        headers = dict(exc.headers or {})
        if exc.status_code == 404:
            message = f"No route {request.method} {request.url.path}"
        if exc.status_code == 405:  # Starlette's Allow names one route's methods only
            headers["Allow"] = ", ".join(allowed_methods(request.scope))
        return await _api_error(request, ApiError(exc.status_code, message, headers=headers))

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> Any:
        return {"status": "ok"}

    @app.get("/_sandbox/stats", tags=["sandbox"], summary="what this shop's writes became",
             **documented(StatsAnswer))
    async def stats(the_shop: Shop = Depends(shop)) -> Any:
        """Per resource: items accepted, rejected and dropped (by ``--drop-rate``), items
        stored and writes still pending visibility. Not part of the real API."""
        counted = {k: v for k, v in the_shop.collection("_stats").docs.items()}
        stored = {
            name: len(the_shop.collection(name))
            for name in [*sync.SYNC_RESOURCES, "contacts"]
        }
        return {
            "statusCode": 200,
            "data": {"writes": counted, "stored": stored, "pending": len(the_shop.pending)},
        }

    @app.get("/_sandbox/arrivals", tags=["sandbox"],
             summary="when this shop's latest API requests arrived",
             **documented(single(Arrivals)))
    async def arrivals(the_shop: Shop = Depends(shop)) -> Any:
        """The arrival times of the latest API requests (``/v1``) of this key's shop, which a
        test of a shared request budget checks the spacing of; the key itself is never
        told. A request answered by an injected fault, or refused for its key, is not
        among them. Not part of the real API."""
        return ok({"at": list(the_shop.arrivals)})

    if settings.manual_clock:

        @app.post("/_sandbox/clock", tags=["sandbox"], summary="move the manual clock forward",
                  dependencies=[Depends(shop)], **documented(single(Now), body=ClockMove))
        async def move_clock(request: Request) -> Any:
            """With ``--manual-clock`` only: advance the clock that pending writes are
            applied by (every shop's; any shop's key may move it), so a test passes the
            visibility delay at once. Not part of the real API."""
            move = validated(ClockMove, await json_object(request))
            if store.clock.now() + move.advance > CLOCK_END:
                raise ApiError(400, "advance: the clock would pass the year 9999")
            now = datetime.fromtimestamp(store.clock.advance(move.advance), UTC)
            return ok({"now": now.isoformat(timespec="milliseconds").replace("+00:00", "Z")})

    for module in (data_sources, sync, contacts, shop_connection, events, custom_data,
                   custom_data_records, kpis):
        app.include_router(module.router)

    return app
