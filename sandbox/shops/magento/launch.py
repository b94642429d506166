"""Starting a fake Magento shop in a subprocess and waiting until it answers: for tests,
benchmarks and scripts that want a real server on a free localhost port."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

import httpx

from sandbox import process
from sandbox.shops.magento.settings import DEFAULT_TOKEN

_BANNER = re.compile(r"magento at (http://\S+/rest/\S+)")


@dataclass
class RunningFakeMagento:
    api_url: str  # http://127.0.0.1:PORT/rest/default
    process: subprocess.Popen[str]
    token: str = DEFAULT_TOKEN
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.api_url.split("/rest/")[0]

    def client(self, *, token: str | None = DEFAULT_TOKEN, **kwargs: Any) -> httpx.Client:
        """A client on ``…/rest/<store>/V1`` sending ``token`` (None: no Authorization)."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        client = httpx.Client(base_url=self.api_url + "/V1", headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def fake(self) -> httpx.Client:
        """A client on the ``/__fake__`` API (changes records, moves the clock)."""
        client = httpx.Client(base_url=self.root + "/__fake__", timeout=30,
                              headers={"authorization": f"Bearer {self.token}"})
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def launch(*args: str) -> subprocess.Popen[str]:
    """Start ``python -m sandbox.shops.magento.serve --port 0 ARGS`` (without waiting)."""
    return process.launch_module("sandbox.shops.magento.serve", *args)


def attach(started: subprocess.Popen[str], timeout: float = 30) -> RunningFakeMagento:
    """Read the banner of a launched shop and wait until it answers ``/healthz``."""
    running = RunningFakeMagento(process.read_banner(started, _BANNER, "fake Magento"), started)
    process.wait_healthy(running.root, started, "fake Magento", timeout)
    return running


def start(*args: str) -> RunningFakeMagento:
    return attach(launch(*args))


def start_many(*arg_lists: tuple[str, ...]) -> list[RunningFakeMagento]:
    """Start several shops at once (their startups overlap)."""
    processes = [launch(*args) for args in arg_lists]
    return [attach(p) for p in processes]
