"""The ASGI frame every HTTP fake shop is built in: a FastAPI app without docs that holds the
shop's store, behind the hosting layer's gate (``sandbox.shops.hosting``), answering
``/healthz``, with its errors answered in the platform's shape. What the routes serve, and
how an answer and an error look, stay with the platform."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import orjson
from fastapi import FastAPI, Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from sandbox.shops import hosting

E = TypeVar("E", bound=Exception)


class ShopError(Exception):
    """A refusal a fake answers in its platform's shape: its HTTP status, message and
    headers; ``text`` is what ``str()`` gives (default: the message)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None,
                 text: str | None = None) -> None:
        super().__init__(message if text is None else text)
        self.status = status
        self.message = message
        self.headers = headers or {}


def json_response(data: Any, status: int = 200, headers: Mapping[str, str] | None = None,
                  *, media_type: str = "application/json; charset=utf-8") -> Response:
    """``data`` as JSON (orjson: compact, UTF-8 unescaped, as PHP's and Ruby's encoders)."""
    return Response(orjson.dumps(data), status_code=status, headers=headers, media_type=media_type)


def shop_app(title: str, store: Any, *, healthy: Callable[[], Response],
             gate: type[hosting.Gate] | None = None, settings: Any = None) -> FastAPI:
    """The app of a fake shop: ``store`` at ``app.state.store``, ``gate`` in front (with
    ``settings``: its rate limit and faults), ``/healthz`` answering ``healthy()``."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    if gate is not None:
        hosting.install(app, gate, settings)

    async def healthz() -> Response:
        return healthy()

    app.add_api_route("/healthz", healthz, methods=["GET"], include_in_schema=False)
    return app


def answer_errors(app: FastAPI, error: type[E], answer: Callable[[E], Response],
                  no_route: Callable[[], E] | None = None,
                  other: Callable[[int, str], E] | None = None) -> None:
    """Answer ``error`` with ``answer``; with ``no_route``, also the router's own refusals
    (404 and 405 as the platform's "no route", other statuses as ``other(status, detail)``)."""

    async def platform_error(request: Request, exc: Exception) -> Response:
        return answer(exc)  # type: ignore[arg-type]  # registered for ``error`` only

    app.add_exception_handler(error, platform_error)
    if no_route is None or other is None:
        return

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code in (404, 405):
            return answer(no_route())
        return answer(other(exc.status_code, str(exc.detail)))

    app.add_exception_handler(StarletteHTTPException, http_error)
