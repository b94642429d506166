"""The fake Shopify shop's process entry (``python -m sandbox.shops.shopify.launch``;
``shopsync fake-shop shopify`` runs the same), and starting it in a subprocess or a thread
of this process for tests, benchmarks and scripts (the shared part is
``sandbox.shops.launch``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.shopify.app import create_app
from sandbox.shops.shopify.settings import DEFAULT_TOKEN, FakeShopifySettings

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


LAUNCHER = Launcher(
    "shopify", FakeShopifySettings, create_app,
    "shopsync fake-shop shopify at http://{s.host}:{port}/admin/api/{{version}}/graphql.json"
    " (access token {s.token})",
    r"shopify at (http://\S+?)/admin/api", "fake Shopify", RunningFakeShopify, timeout=60)
start, start_in_thread = LAUNCHER.start, LAUNCHER.start_in_thread

if __name__ == "__main__":
    LAUNCHER.main()
