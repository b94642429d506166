"""Starting a fake Magento shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port (the shared part is
``sandbox.shops.launch``); ``start_in_thread`` serves it in a thread of this process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.magento.settings import DEFAULT_TOKEN


@dataclass
class RunningFakeMagento(RunningFake):
    token: str = DEFAULT_TOKEN

    @property
    def root(self) -> str:
        return self.api_url.split("/rest/")[0]

    def client(self, *, token: str | None = DEFAULT_TOKEN, **kwargs: Any) -> httpx.Client:
        """A client on ``…/rest/<store>/V1`` sending ``token`` (None: no Authorization)."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return self.open(self.api_url + "/V1", headers=headers, **kwargs)

    def fake_credentials(self) -> dict[str, Any]:
        return {"headers": {"authorization": f"Bearer {self.token}"}}


_LAUNCHER = Launcher("sandbox.shops.magento.serve", re.compile(r"magento at (http://\S+/rest/\S+)"),
                     "fake Magento", RunningFakeMagento)
launch, attach, start = _LAUNCHER.launch, _LAUNCHER.attach, _LAUNCHER.start
start_many, start_in_thread = _LAUNCHER.start_many, _LAUNCHER.start_in_thread
start_many_in_thread = _LAUNCHER.start_many_in_thread
