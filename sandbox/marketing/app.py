"""The sandbox Marketing API as an ASGI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from sandbox.marketing.errors import ApiError, validated
from sandbox.marketing.faults import FaultInjection
from sandbox.marketing.guards import BodyGuard
from sandbox.marketing.http import OrjsonResponse, json_object, ok, shop
from sandbox.marketing.limits import CLOCK_END, MAX_CLOCK_ADVANCE
from sandbox.marketing.openapi import describe
from sandbox.marketing.persistence import InMemory, SqliteFile
from sandbox.marketing.routes import (
    contacts,
    custom_data,
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
        errors = [
            f"{'.'.join(str(p) for p in e['loc'][1:]) or e['loc'][0]}: {e['msg']}"
            for e in exc.errors()
        ]
        return await _api_error(request, ApiError(400, errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> OrjsonResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404:
            message = f"No route {request.method} {request.url.path}"
        return await _api_error(request, ApiError(exc.status_code, message))

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> Any:
        return {"status": "ok"}

    @app.get("/_sandbox/stats", tags=["sandbox"], summary="what this shop's writes became")
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

    if settings.manual_clock:
        clock_body = {"requestBody": {"required": True, "content": {
            "application/json": {"schema": ClockMove.model_json_schema()}}}}

        @app.post("/_sandbox/clock", tags=["sandbox"], summary="move the manual clock forward",
                  dependencies=[Depends(shop)], openapi_extra=clock_body)
        async def move_clock(request: Request) -> Any:
            """With ``--manual-clock`` only: advance the clock that pending writes are
            applied by (every shop's; any shop's key may move it), so a test passes the
            visibility delay at once. Not part of the real API."""
            move = validated(ClockMove, await json_object(request))
            if store.clock.now() + move.advance > CLOCK_END:
                raise ApiError(400, "advance: the clock would pass the year 9999")
            now = datetime.fromtimestamp(store.clock.advance(move.advance), UTC)
            return ok({"now": now.isoformat(timespec="milliseconds").replace("+00:00", "Z")})

    for module in (data_sources, sync, contacts, shop_connection, events, custom_data, kpis):
        app.include_router(module.router)

    return app
