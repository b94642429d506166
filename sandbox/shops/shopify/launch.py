"""Starting a fake Shopify shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port (the shared part is
``sandbox.shops.launch``); ``start_in_thread`` serves it in a thread of this process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.shopify.settings import DEFAULT_TOKEN

VERSION = "2025-10"


@dataclass
class RunningFakeShopify(RunningFake):
    token: str = DEFAULT_TOKEN
    #: bulk operations and large shops answer slower than the REST fakes
    timeout: ClassVar[float] = 60

    def endpoint(self, version: str = VERSION) -> str:
        return f"{self.root}/admin/api/{version}/graphql.json"

    def client(self, token: str | None = DEFAULT_TOKEN, **kwargs: Any) -> httpx.Client:
        headers = {"X-Shopify-Access-Token": token} if token is not None else {}
        return self.open(self.root, headers=headers, **kwargs)

    def graphql(self, query: str, variables: dict[str, Any] | None = None,
                version: str = VERSION) -> dict[str, Any]:
        """POST one query with the shop's token; the decoded answer."""
        answer = self.client().post(f"/admin/api/{version}/graphql.json",
                                    json={"query": query, "variables": variables or {}})
        answer.raise_for_status()
        return answer.json()

    def fake_credentials(self) -> dict[str, Any]:
        return {"headers": {"X-Shopify-Access-Token": self.token}}


_LAUNCHER = Launcher("sandbox.shops.shopify.serve", re.compile(r"shopify at (http://\S+?)/admin/api"),
                     "fake Shopify", RunningFakeShopify, timeout=60)
launch, attach, start = _LAUNCHER.launch, _LAUNCHER.attach, _LAUNCHER.start
start_many, start_in_thread = _LAUNCHER.start_many, _LAUNCHER.start_in_thread
start_many_in_thread = _LAUNCHER.start_many_in_thread
