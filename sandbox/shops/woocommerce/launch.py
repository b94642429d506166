"""Starting a fake WooCommerce shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

import httpx

from sandbox import process
from sandbox.shops.woocommerce.settings import DEFAULT_CONSUMER_KEY, DEFAULT_CONSUMER_SECRET

_BANNER = re.compile(r"woocommerce at (http://\S+/wp-json/wc/v3)")


@dataclass
class RunningFakeShop:
    api_url: str  # http://127.0.0.1:PORT/wp-json/wc/v3
    process: subprocess.Popen[str]
    key: str = DEFAULT_CONSUMER_KEY
    secret: str = DEFAULT_CONSUMER_SECRET
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.api_url.removesuffix("/wp-json/wc/v3")

    def client(self, *, auth: tuple[str, str] | None | bool = True, **kwargs: Any) -> httpx.Client:
        """A client on the API root, with the shop's key by HTTP Basic (``auth=False``: none)."""
        credentials = (self.key, self.secret) if auth is True else (auth or None)
        client = httpx.Client(base_url=self.api_url, auth=credentials, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def fake(self) -> httpx.Client:
        """A client on the ``/__fake__`` API (changes records, moves the clock)."""
        client = httpx.Client(base_url=self.root + "/__fake__", auth=(self.key, self.secret),
                              timeout=30)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def launch(*args: str) -> subprocess.Popen[str]:
    """Start ``python -m sandbox.shops.woocommerce.serve --port 0 ARGS`` (without waiting)."""
    return process.launch_module("sandbox.shops.woocommerce.serve", *args)


def attach(started: subprocess.Popen[str], timeout: float = 30) -> RunningFakeShop:
    """Read the banner of a launched shop and wait until it answers ``/healthz``."""
    running = RunningFakeShop(process.read_banner(started, _BANNER, "fake WooCommerce"), started)
    process.wait_healthy(running.root, started, "fake WooCommerce", timeout)
    return running


def start(*args: str) -> RunningFakeShop:
    return attach(launch(*args))


def start_many(*arg_lists: tuple[str, ...]) -> list[RunningFakeShop]:
    """Start several shops at once (their startups overlap)."""
    processes = [launch(*args) for args in arg_lists]
    return [attach(p) for p in processes]
