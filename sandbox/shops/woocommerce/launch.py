"""The fake WooCommerce shop's process entry (``python -m sandbox.shops.woocommerce.launch``;
``shopsync fake-shop woocommerce`` runs the same), and starting it in a subprocess or a
thread of this process for tests, benchmarks and scripts (the shared part is
``sandbox.shops.launch``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.woocommerce.app import create_app
from sandbox.shops.woocommerce.settings import (
    DEFAULT_CONSUMER_KEY,
    DEFAULT_CONSUMER_SECRET,
    FakeWooSettings,
)


@dataclass
class RunningFakeShop(RunningFake):
    api_path = "/wp-json/wc/v3"
    key: str = DEFAULT_CONSUMER_KEY
    secret: str = DEFAULT_CONSUMER_SECRET

    def client(self, *, auth: tuple[str, str] | None | bool = True, **kwargs: Any) -> httpx.Client:
        """A client on the API root, with the shop's key by HTTP Basic (``auth=False``: none)."""
        credentials = (self.key, self.secret) if auth is True else (auth or None)
        return self.open(self.api_url, auth=credentials, **kwargs)

    def fake_credentials(self) -> dict[str, Any]:
        return {"auth": (self.key, self.secret)}


LAUNCHER = Launcher(
    "woocommerce", FakeWooSettings, create_app,
    "shopsync fake-shop woocommerce at http://{s.host}:{port}/wp-json/wc/v3"
    " (consumer key {s.consumer_key}, secret {s.consumer_secret})",
    r"woocommerce at (http://\S+/wp-json/wc/v3)", "fake WooCommerce", RunningFakeShop)
launch, attach, start = LAUNCHER.launch, LAUNCHER.attach, LAUNCHER.start
start_many, start_in_thread = LAUNCHER.start_many, LAUNCHER.start_in_thread
start_many_in_thread = LAUNCHER.start_many_in_thread

if __name__ == "__main__":
    LAUNCHER.main()
