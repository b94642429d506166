"""Serving a fake shop with uvicorn, as every platform's ``serve`` module does: the shop is
generated once the port is held (a large one takes a while), then the one banner line that
``sandbox.shops.launch`` reads is printed, and the app is served until stopped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from starlette.types import ASGIApp

from sandbox.serving import serve_app


class Listening(Protocol):
    """Where a fake listens (every fake's settings say it)."""

    host: str
    port: int


S = TypeVar("S", bound=Listening)


def serve_shop(create_app: Callable[[S], ASGIApp], banner: Callable[[S, int], str],
               settings: S) -> None:
    """Bind ``settings.host:port``, build ``create_app(settings)``, print
    ``banner(settings, bound_port)``, serve."""
    serve_app(lambda: create_app(settings), settings.host, settings.port,
              lambda port: banner(settings, port))
