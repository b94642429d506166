"""The fake PrestaShop shop's process entry (``python -m sandbox.shops.prestashop.launch``;
``shopsync fake-shop prestashop`` runs the same), and starting it in a subprocess or a
thread of this process for tests, benchmarks and scripts (the shared part is
``sandbox.shops.launch``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.prestashop.app import create_app
from sandbox.shops.prestashop.settings import DEFAULT_KEY, FakePrestaSettings


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


LAUNCHER = Launcher(
    "prestashop", FakePrestaSettings, create_app,
    "shopsync fake-shop prestashop at http://{s.host}:{port}/api (PrestaShop {s.ps_version},"
    " key {s.key}, timezone {s.timezone}, {s.languages} language(s))",
    r"prestashop at (http://\S+/api)", "fake PrestaShop", RunningFakeShop)
start, start_in_thread = LAUNCHER.start, LAUNCHER.start_in_thread
start_many_in_thread = LAUNCHER.start_many_in_thread

if __name__ == "__main__":
    LAUNCHER.main()
