"""Real sandboxes for the tests: started as ``shopsync sandbox`` processes on free ports,
and keys that open new, empty shops. Test modules import from here; fixtures live in
``conftest.py``."""

from __future__ import annotations

import re
import secrets
import subprocess
from dataclasses import dataclass, field

import httpx

from sandbox import process
from sandbox.marketing.settings import DEFAULT_KEY

_BANNER = re.compile(r"Marketing API at (http://[^\s]+/v1)")


@dataclass
class RunningSandbox:
    """A ``shopsync sandbox`` process started for the tests."""

    base_url: str
    process: subprocess.Popen[str]
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def client(self, key: str | None = DEFAULT_KEY, **kwargs: object) -> httpx.Client:
        """An httpx client on ``/v1`` sending ``key`` (none when ``key`` is None)."""
        headers = {"spm-api-key": key} if key is not None else {}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def new_shop(self) -> httpx.Client:
        """A client of a new, empty shop (the sandbox must run with ``--accept-any-key``)."""
        return self.client(new_key())

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def start_sandbox(*args: str) -> RunningSandbox:
    """Start ``shopsync sandbox --port 0 ARGS`` and wait until it answers."""
    started = process.launch_module("pipelines.cli", "sandbox", *args)
    running = RunningSandbox(process.read_banner(started, _BANNER, "the sandbox"), started)
    process.wait_healthy(running.root, started, "the sandbox", timeout=15)
    return running


def new_key() -> str:
    """A well-formed key nobody has used: with ``--accept-any-key`` it opens an empty shop."""
    return f"t{secrets.token_hex(4)[:7]}.{secrets.token_urlsafe(12)}"


def new_kpi_key() -> str:
    return f"kpi-{secrets.token_hex(12)}"
