"""Starting a fake WooCommerce shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port (the shared part is
``sandbox.shops.launch``); ``start_in_thread`` serves it in a thread of this process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.woocommerce.settings import DEFAULT_CONSUMER_KEY, DEFAULT_CONSUMER_SECRET


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


_LAUNCHER = Launcher("sandbox.shops.woocommerce.serve",
                     re.compile(r"woocommerce at (http://\S+/wp-json/wc/v3)"), "fake WooCommerce",
                     RunningFakeShop)
launch, attach, start = _LAUNCHER.launch, _LAUNCHER.attach, _LAUNCHER.start
start_many, start_in_thread = _LAUNCHER.start_many, _LAUNCHER.start_in_thread
start_many_in_thread = _LAUNCHER.start_many_in_thread
