"""Starting a fake shop in a subprocess and waiting until it answers, for tests, benchmarks
and scripts that want a real server on a free localhost port: what the four HTTP fakes
share. Each platform's ``launch`` module keeps what is its own: the address its banner
names, its credentials, and how its clients authenticate.

``start_in_thread`` serves the same fake from the same arguments in a thread of this
process instead (real HTTP, no process start-up): for tests whose subject is not the
process. Its handle is the same, and stops the same way."""

from __future__ import annotations

import importlib
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import httpx

from connectors.http.tls import tls_context
from sandbox import process

if TYPE_CHECKING:
    from sandbox.serving import Served


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


@dataclass(frozen=True)
class Launcher(Generic[R]):
    """How to start one platform's fake: ``python -m <module>`` (or, in a thread of this
    process, ``<module>.serve_in_thread``), the banner's first group is the address
    ``running`` is made with, and ``what`` names the fake in errors."""

    module: str
    banner: re.Pattern[str]
    what: str
    running: Callable[[str, subprocess.Popen[str] | Served], R]
    #: seconds to wait for ``/healthz`` (a fake that generates more at startup wants more)
    timeout: float = 30

    def launch(self, *args: str) -> subprocess.Popen[str]:
        """Start ``python -m <module> ARGS --port 0`` (without waiting)."""
        return process.launch_module(self.module, *args)

    def attach(self, started: subprocess.Popen[str], timeout: float | None = None) -> R:
        """Read the banner of a launched shop and wait until it answers ``/healthz``."""
        running = self.running(process.read_banner(started, self.banner, self.what), started)
        process.wait_healthy(running.root, started, self.what,
                             self.timeout if timeout is None else timeout)
        return running

    def start(self, *args: str) -> R:
        return self.attach(self.launch(*args))

    def start_many(self, *arg_lists: tuple[str, ...]) -> list[R]:
        """Start several shops at once (their startups overlap)."""
        processes = [self.launch(*args) for args in arg_lists]
        return [self.attach(p) for p in processes]

    def start_in_thread(self, *args: str) -> R:
        """The shop ``start(*args)`` gives, served in a thread of this process: it answers
        when this returns (a bad argument raises here)."""
        module = importlib.import_module(self.module)
        serve: Callable[..., tuple[Served, str]] = module.serve_in_thread
        served, banner = serve(*args, "--port", "0")
        match = self.banner.search(banner)
        if match is None:
            served.stop()
            raise RuntimeError(f"{self.what}: no address in its banner {banner!r}")
        return self.running(match.group(1), served)

    def start_many_in_thread(self, *arg_lists: tuple[str, ...]) -> list[R]:
        return [self.start_in_thread(*args) for args in arg_lists]
