"""Starting a fake Shopify shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

import httpx

from sandbox import process
from sandbox.shops.shopify.settings import DEFAULT_TOKEN

_BANNER = re.compile(r"shopify at (http://\S+?)/admin/api")
VERSION = "2025-10"


@dataclass
class RunningFakeShopify:
    root: str  # http://127.0.0.1:PORT
    process: subprocess.Popen[str]
    token: str = DEFAULT_TOKEN
    clients: list[httpx.Client] = field(default_factory=list)

    def endpoint(self, version: str = VERSION) -> str:
        return f"{self.root}/admin/api/{version}/graphql.json"

    def client(self, token: str | None = DEFAULT_TOKEN, **kwargs: Any) -> httpx.Client:
        headers = {"X-Shopify-Access-Token": token} if token is not None else {}
        client = httpx.Client(base_url=self.root, headers=headers, timeout=60, **kwargs)
        self.clients.append(client)
        return client

    def graphql(self, query: str, variables: dict[str, Any] | None = None,
                version: str = VERSION) -> dict[str, Any]:
        """POST one query with the shop's token; the decoded answer."""
        answer = self.client().post(f"/admin/api/{version}/graphql.json",
                                    json={"query": query, "variables": variables or {}})
        answer.raise_for_status()
        return answer.json()

    def fake(self) -> httpx.Client:
        """A client on the ``/__fake__`` API."""
        client = httpx.Client(base_url=self.root + "/__fake__",
                              headers={"X-Shopify-Access-Token": self.token}, timeout=60)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def launch(*args: str) -> subprocess.Popen[str]:
    """Start ``python -m sandbox.shops.shopify.serve --port 0 ARGS`` (without waiting)."""
    return process.launch_module("sandbox.shops.shopify.serve", *args)


def attach(started: subprocess.Popen[str], timeout: float = 60) -> RunningFakeShopify:
    """Read the banner of a launched shop and wait until it answers ``/healthz``."""
    running = RunningFakeShopify(process.read_banner(started, _BANNER, "fake Shopify"), started)
    process.wait_healthy(running.root, started, "fake Shopify", timeout)
    return running


def start(*args: str) -> RunningFakeShopify:
    return attach(launch(*args))
