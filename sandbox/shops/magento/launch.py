"""The fake Magento shop's process entry (``python -m sandbox.shops.magento.launch``;
``shopsync fake-shop magento`` runs the same), and starting it in a subprocess or a thread
of this process for tests, benchmarks and scripts (the shared part is
``sandbox.shops.launch``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.shops.launch import Launcher, RunningFake
from sandbox.shops.magento.app import create_app
from sandbox.shops.magento.settings import DEFAULT_TOKEN, FakeMagentoSettings


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


LAUNCHER = Launcher(
    "magento", FakeMagentoSettings, create_app,
    "shopsync fake-shop magento at http://{s.host}:{port}/rest/{s.store_code}"
    " (bearer token {s.token})",
    r"magento at (http://\S+/rest/\S+)", "fake Magento", RunningFakeMagento)
start, start_in_thread = LAUNCHER.start, LAUNCHER.start_in_thread
start_many_in_thread = LAUNCHER.start_many_in_thread

if __name__ == "__main__":
    LAUNCHER.main()
