"""Running a local server of the sandbox as its own process, for tests, benchmarks and the
demo: start it on a free port, read its address from the one banner line it prints, wait
until it answers ``/healthz``, and stop it."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import httpx

# transport plumbing shared with the client (how to trust a local certificate), not a
# reading of the API: the one import of ``connectors`` the sandbox keeps
from connectors.http.tls import tls_context

if TYPE_CHECKING:
    from sandbox.serving import Served


def launch_module(module: str, *args: str) -> subprocess.Popen[str]:
    """Start ``python -m MODULE ARGS --port 0`` without waiting for it."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def read_banner(process: subprocess.Popen[str], pattern: str | re.Pattern[str], what: str) -> str:
    """The first group of ``pattern`` in the process's first line; the whole output in the
    error when it does not start."""
    assert process.stdout is not None
    first = process.stdout.readline()
    match = re.search(pattern, first)
    if not match:
        process.kill()
        raise RuntimeError(f"{what} did not start: {first}{process.stdout.read()}")
    return match.group(1)


def wait_healthy(root: str, process: subprocess.Popen[str], what: str, timeout: float = 30) -> None:
    """Wait until ``root/healthz`` answers 200; stop the process and fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(root + "/healthz", timeout=1, verify=tls_context()).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"{what} did not answer /healthz within {timeout} s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[str] | Served) -> None:
    """Stop a server started as its own process, or one served in a thread of this one."""
    if not isinstance(process, subprocess.Popen):
        process.stop()
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
