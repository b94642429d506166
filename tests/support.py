"""Real sandboxes for the tests: started as ``shopsync sandbox`` processes on free ports,
and keys that open new, empty shops. Test modules import from here; fixtures live in
``conftest.py``."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field

import httpx

from sandbox.marketing.settings import DEFAULT_KEY

_BANNER = re.compile(r"Marketing API at (http://[^\s]+/v1)")


@dataclass
class RunningSandbox:
    """A ``shopsync sandbox`` process started for the tests."""

    base_url: str
    process: subprocess.Popen[str]
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def client(self, key: str | None = DEFAULT_KEY, **kwargs: object) -> httpx.Client:
        """An httpx client on ``/v1`` sending ``key`` (none when ``key`` is None)."""
        headers = {"spm-api-key": key} if key is not None else {}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def new_shop(self) -> httpx.Client:
        """A client of a new, empty shop (the sandbox must run with ``--accept-any-key``)."""
        return self.client(new_key())

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_sandbox(*args: str) -> RunningSandbox:
    """Start ``shopsync sandbox --port 0 ARGS`` and wait until it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "sandbox", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    match = _BANNER.search(first)
    if not match:
        process.kill()
        rest = process.stdout.read()
        raise RuntimeError(f"sandbox did not start: {first}{rest}")
    running = RunningSandbox(match.group(1), process)
    deadline = time.monotonic() + 15
    while True:
        try:
            if httpx.get(running.root + "/healthz", timeout=1).status_code == 200:
                return running
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            running.stop()
            raise RuntimeError("sandbox did not answer /healthz within 15 s")
        time.sleep(0.05)


def new_key() -> str:
    """A well-formed key nobody has used: with ``--accept-any-key`` it opens an empty shop."""
    return f"t{secrets.token_hex(4)[:7]}.{secrets.token_urlsafe(12)}"


def new_kpi_key() -> str:
    return f"kpi-{secrets.token_hex(12)}"
