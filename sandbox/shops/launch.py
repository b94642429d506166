"""A fake shop's process entry, and starting it for tests, benchmarks and scripts that want
a real server on a free localhost port: what the four HTTP fakes share. Each platform's
``launch`` module declares its ``Launcher`` (its command, settings, app and banner line) and
keeps what is its own: its credentials and how its clients authenticate.

``python -m sandbox.shops.<platform>.launch`` (and ``shopsync fake-shop <platform>``, which
runs the same settings) generates the shop once the port is held (a large one takes a
while), prints the one banner line ``start`` reads the address from, and serves until
stopped. ``start_in_thread`` serves the same fake from the same arguments in a thread of
this process instead (real HTTP, no process start-up): for tests whose subject is not the
process. Its handle is the same, and stops the same way."""

from __future__ import annotations

import importlib
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import click
import httpx
from starlette.types import ASGIApp

from connectors.http.tls import tls_context
from sandbox import process
from sandbox.serving import Served, serve_app, serve_in_thread
from sandbox.shops.cli import settings_or_exit
from sandbox.shops.settings import FakeShopSettings


@dataclass
class RunningFake:
    """A fake shop running in its own process or in a thread of this one (``process``), and
    the clients opened on it (``stop`` closes them). ``api_url`` is the address its banner
    names; ``root`` is the server's (``http://127.0.0.1:PORT``), ``api_url`` without the
    platform's ``api_path``."""

    api_url: str
    process: subprocess.Popen[str] | Served
    clients: list[httpx.Client] = field(default_factory=list)
    #: seconds a client waits for an answer (a large shop answers its first query slowly)
    timeout: ClassVar[float] = 30
    api_path: ClassVar[str] = ""

    @property
    def root(self) -> str:
        return self.api_url.removesuffix(self.api_path)

    def open(self, base_url: str, **kwargs: Any) -> httpx.Client:
        """A client on ``base_url``, closed with the shop."""
        client = httpx.Client(base_url=base_url, timeout=self.timeout, verify=tls_context(), **kwargs)
        self.clients.append(client)
        return client

    def fake_credentials(self) -> dict[str, Any]:
        """How a client on ``/__fake__`` authenticates: the platform's ``auth`` or headers."""
        return {}

    def fake(self) -> httpx.Client:
        """A client on the ``/__fake__`` API (changes records, moves the clock)."""
        return self.open(self.root + "/__fake__", **self.fake_credentials())

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


R = TypeVar("R", bound=RunningFake)
F = TypeVar("F", bound=FakeShopSettings)


@dataclass(frozen=True)
class Launcher(Generic[R, F]):
    """One platform's fake (``sandbox.shops.<platform>``): its settings ``model``,
    ``create_app`` and ``banner`` (formatted with the settings as ``s`` and the bound
    ``port``); how to start it as ``python -m`` of its ``launch`` module or in a thread of
    this process (its ``command`` module's command, imported when first needed, so that the
    command's module stays light), ``address`` finding in the banner what ``running`` is
    made with, ``what`` naming the fake in errors."""

    platform: str
    model: type[F]
    create_app: Callable[[F], ASGIApp]
    banner: str
    address: str
    what: str
    running: Callable[[str, subprocess.Popen[str] | Served], R]
    #: seconds to wait for ``/healthz`` (a fake that generates more at startup wants more)
    timeout: float = 30

    # serving (in the fake's process) --------------------------------------------------

    def click_command(self) -> click.Command:
        module = importlib.import_module(f"sandbox.shops.{self.platform}.command")
        found: click.Command = module.command
        return found

    def banner_line(self, settings: F, port: int) -> str:
        return self.banner.format(s=settings, port=port)

    def serve(self, settings: F) -> None:
        """Bind ``settings.host:port``, build the app, print the one banner line, serve."""
        serve_app(lambda: self.create_app(settings), settings.host, settings.port,
                  lambda port: self.banner_line(settings, port))

    def run(self, options: Mapping[str, Any]) -> None:
        """The command's body: its options as settings (a bad one exits 2), then serve."""
        self.serve(settings_or_exit(self.model, dict(options)))

    def main(self) -> None:
        self.click_command()()

    # starting (from a test, a benchmark, a script) -------------------------------------

    def launch(self, *args: str) -> subprocess.Popen[str]:
        """Start ``python -m <module> ARGS --port 0`` (without waiting)."""
        return process.launch_module(f"sandbox.shops.{self.platform}.launch", *args)

    def attach(self, started: subprocess.Popen[str]) -> R:
        """Read the banner of a launched shop and wait until it answers ``/healthz``."""
        running = self.running(process.read_banner(started, self.address, self.what), started)
        process.wait_healthy(running.root, started, self.what, self.timeout)
        return running

    def start(self, *args: str) -> R:
        return self.attach(self.launch(*args))

    def start_many(self, *arg_lists: tuple[str, ...]) -> list[R]:
        """Start several shops at once (their startups overlap)."""
        processes = [self.launch(*args) for args in arg_lists]
        return [self.attach(p) for p in processes]

    def start_in_thread(self, *args: str) -> R:
        """The shop ``start(*args)`` gives, served in a thread of this process rather than its
        own: the settings from the command's options (a bad one raises here instead of ending
        the process), the app built and served as ``serve`` does; it answers when this
        returns."""
        command = self.click_command()
        params = command.make_context(command.name, [*args, "--port", "0"]).params
        settings = self.model.model_validate(params)
        served = serve_in_thread(lambda: self.create_app(settings), settings.host, settings.port)
        banner = self.banner_line(settings, served.port)
        match = re.search(self.address, banner)
        if match is None:
            served.stop()
            raise RuntimeError(f"{self.what}: no address in its banner {banner!r}")
        return self.running(match.group(1), served)

    def start_many_in_thread(self, *arg_lists: tuple[str, ...]) -> list[R]:
        return [self.start_in_thread(*args) for args in arg_lists]
