"""Serving a fake shop with uvicorn, as every platform's ``serve`` module does: the shop is
generated once the port is held (a large one takes a while), then the one banner line that
``sandbox.shops.launch`` reads is printed, and the app is served until stopped. Or the same
fake, from the same command-line arguments, served in a thread of the calling process
(``serve_shop_in_thread``, for tests whose subject is not the process)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import click
from starlette.types import ASGIApp

from sandbox.serving import Served, serve_app, serve_in_thread
from sandbox.shops.settings import FakeShopSettings


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


F = TypeVar("F", bound=FakeShopSettings)


def serve_shop_in_thread(command: click.Command, model: type[F],
                         create_app: Callable[[F], ASGIApp], banner: Callable[[F, int], str],
                         args: Sequence[str]) -> tuple[Served, str]:
    """``command ARGS`` served in a thread of this process rather than its own: the settings
    from the command's options (a bad one raises instead of ending the process), the app
    built and served as ``serve_shop`` does; the server and the banner line it would print."""
    settings = model.model_validate(command.make_context(command.name, list(args)).params)
    served = serve_in_thread(lambda: create_app(settings), settings.host, settings.port)
    return served, banner(settings, served.port)
