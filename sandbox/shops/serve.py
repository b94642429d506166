"""Serving a fake shop with uvicorn, as every platform's ``serve`` module does: the shop is
generated once the port is held (a large one takes a while), then the one banner line that
``sandbox.shops.launch`` reads is printed, and the app is served until stopped. Or the same
fake, from the same command-line arguments, served in a thread of the calling process
(``serve_shop_in_thread``, for tests whose subject is not the process)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import click
from starlette.types import ASGIApp

from sandbox.serving import Served, serve_app, serve_in_thread
from sandbox.shops.cli import settings_or_exit
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


@dataclass(frozen=True)
class Entry(Generic[F]):
    """One platform's process entry: its ``command`` (``module:name``, imported when first
    needed, so that the command's module stays light), its settings, app and banner line.
    The platform's ``serve`` module exposes ``serve`` and ``serve_in_thread`` (what
    ``sandbox.shops.launch`` calls) and runs ``main`` as ``python -m``."""

    command: str
    model: type[F]
    create_app: Callable[[F], ASGIApp]
    banner: Callable[[F, int], str]

    def click_command(self) -> click.Command:
        module, _, name = self.command.partition(":")
        found: click.Command = getattr(importlib.import_module(module), name)
        return found

    def serve(self, settings: F) -> None:
        """Generate the shop once the port is held, print the one banner line, serve."""
        serve_shop(self.create_app, self.banner, settings)

    def run(self, options: Mapping[str, Any]) -> None:
        """The command's body: its options as settings (a bad one exits 2), then serve."""
        self.serve(settings_or_exit(self.model, dict(options)))

    def serve_in_thread(self, *args: str) -> tuple[Served, str]:
        """The shop the command serves with ``args``, served in a thread of this process:
        the server and its banner line."""
        return serve_shop_in_thread(self.click_command(), self.model, self.create_app,
                                    self.banner, args)

    def main(self) -> None:
        self.click_command()()
