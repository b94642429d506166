"""Starting a fake PrestaShop shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

import httpx

from sandbox import process
from sandbox.shops.prestashop.settings import DEFAULT_KEY

_BANNER = re.compile(r"prestashop at (http://\S+/api)")


@dataclass
class RunningFakeShop:
    api_url: str  # http://127.0.0.1:PORT/api
    process: subprocess.Popen[str]
    key: str = DEFAULT_KEY
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.api_url.removesuffix("/api")

    def client(self, *, key: str | None = None, json: bool = True, **kwargs: Any) -> httpx.Client:
        """A client on ``/api`` with the shop's key as the Basic user name (``key=""``:
        none), asking for JSON unless ``json=False``."""
        key = self.key if key is None else key
        headers = {"Output-Format": "JSON"} if json else {}
        client = httpx.Client(base_url=self.api_url, auth=(key, "") if key else None,
                              headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def fake(self) -> httpx.Client:
        """A client on the ``/__fake__`` API (changes records, moves the clock)."""
        client = httpx.Client(base_url=self.root + "/__fake__", auth=(self.key, ""), timeout=30)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def launch(*args: str) -> subprocess.Popen[str]:
    """Start ``python -m sandbox.shops.prestashop.serve --port 0 ARGS`` (without waiting)."""
    return process.launch_module("sandbox.shops.prestashop.serve", *args)


def attach(started: subprocess.Popen[str], timeout: float = 30) -> RunningFakeShop:
    """Read the banner of a launched shop and wait until it answers ``/healthz``."""
    running = RunningFakeShop(process.read_banner(started, _BANNER, "fake PrestaShop"), started)
    process.wait_healthy(running.root, started, "fake PrestaShop", timeout)
    return running


def start(*args: str) -> RunningFakeShop:
    return attach(launch(*args))


def start_many(*arg_lists: tuple[str, ...]) -> list[RunningFakeShop]:
    """Start several shops at once (their startups overlap)."""
    processes = [launch(*args) for args in arg_lists]
    return [attach(p) for p in processes]
