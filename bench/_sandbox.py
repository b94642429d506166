"""Starting ``shopsync sandbox`` for a benchmark: its own process on a free port.

Benchmarks may not import ``tests/``, so this is their copy of the pattern in
``tests/conftest.py``: start with ``--port 0``, read the URL from the first line it prints.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from connectors.http.tls import tls_context

_BANNER = re.compile(r"Marketing API at (http://\S+/v1)")


@dataclass
class SandboxProcess:
    """A running sandbox: its ``/v1`` base URL and its process (stop it with ``stop``)."""

    base_url: str
    process: subprocess.Popen[str]
    #: the last lines it printed after its banner, for when something goes wrong
    output: deque[str] = field(default_factory=lambda: deque(maxlen=50))

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def peak_rss_mib(self) -> float:
        """The sandbox's peak resident memory so far (Linux)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmHWM:\s+(\d+)", status)
        return int(match.group(1)) / 1024 if match else float("nan")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_sandbox_process(*args: str) -> SandboxProcess:
    """Start ``shopsync sandbox --port 0 ARGS`` and wait until it answers ``/healthz``."""
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
        raise SystemExit(f"the sandbox did not start: {first}{process.stdout.read()}")
    running = SandboxProcess(match.group(1), process)
    # keep reading what it prints: a full pipe would block the server mid-benchmark
    threading.Thread(target=_drain, args=(process.stdout, running.output), daemon=True).start()
    deadline = time.monotonic() + 15
    while True:
        try:
            if httpx.get(running.root + "/healthz", timeout=1, verify=tls_context()).status_code == 200:
                return running
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            running.stop()
            raise SystemExit("the sandbox did not answer /healthz within 15 s")
        time.sleep(0.05)


def _drain(stream: IO[str], into: deque[str]) -> None:
    for line in stream:
        into.append(line)
