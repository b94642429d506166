"""Starting a fake PrestaShop shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port (the shared part is
``sandbox.shops.launch``); ``start_in_thread`` serves it in a thread of this process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.prestashop.settings import DEFAULT_KEY


@dataclass
class RunningFakeShop(RunningFake):
    api_path = "/api"
    key: str = DEFAULT_KEY


    def client(self, *, key: str | None = None, json: bool = True, **kwargs: Any) -> httpx.Client:
        """A client on ``/api`` with the shop's key as the Basic user name (``key=""``:
        none), asking for JSON unless ``json=False``."""
        key = self.key if key is None else key
        headers = {"Output-Format": "JSON"} if json else {}
        return self.open(self.api_url, auth=(key, "") if key else None, headers=headers, **kwargs)

    def fake_credentials(self) -> dict[str, Any]:
        return {"auth": (self.key, "")}


_LAUNCHER = Launcher("sandbox.shops.prestashop.serve", re.compile(r"prestashop at (http://\S+/api)"),
                     "fake PrestaShop", RunningFakeShop)
launch, attach, start = _LAUNCHER.launch, _LAUNCHER.attach, _LAUNCHER.start
start_many, start_in_thread = _LAUNCHER.start_many, _LAUNCHER.start_in_thread
start_many_in_thread = _LAUNCHER.start_many_in_thread
