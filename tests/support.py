"""Real sandboxes for the tests: ``shopsync sandbox`` on free ports, served in a thread of
the test process (or, for tests whose subject is the process, started as one), keys that
open new, empty shops, and a bounded wait for what a server does in its own time. Test
modules import from here; fixtures live in ``conftest.py``."""

from __future__ import annotations

import re
import secrets
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from connectors.http.tls import tls_context
from sandbox import process
from sandbox.marketing.settings import DEFAULT_KEY
from sandbox.serving import Served

_BANNER = re.compile(r"Marketing API at (http://[^\s]+/v1)")
T = TypeVar("T")
D = TypeVar("D")


@dataclass
class RunningSandbox:
    """A ``shopsync sandbox`` started for the tests: its own process, or served in a thread of
    this one."""

    base_url: str
    process: subprocess.Popen[str] | Served
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def client(self, key: str | None = DEFAULT_KEY, **kwargs: object) -> httpx.Client:
        """An httpx client on ``/v1`` sending ``key`` (none when ``key`` is None)."""
        headers = {"spm-api-key": key} if key is not None else {}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=30,
                              verify=tls_context(), **kwargs)
        self.clients.append(client)
        return client

    def advance_clock(self, seconds: float, key: str = DEFAULT_KEY) -> None:
        """Move the clock pending writes are applied by (the sandbox must run with
        ``--manual-clock``): a test passes the visibility delay without waiting."""
        httpx.post(self.root + "/_sandbox/clock", json={"advance": seconds},
                   headers={"spm-api-key": key}, verify=tls_context()).raise_for_status()

    def new_shop(self) -> httpx.Client:
        """A client of a new, empty shop (the sandbox must run with ``--accept-any-key``)."""
        return self.client(new_key())

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        process.stop(self.process)


def start_sandbox(*args: str, own_process: bool = False) -> RunningSandbox:
    """``shopsync sandbox --port 0 ARGS``, answering when this returns: served in a thread of
    the test process, or, with ``own_process``, started as its own process (for tests whose
    subject is the process: its output, its data file across restarts)."""
    if not own_process:
        return _serve_sandbox(*args)
    started = process.launch_module("pipelines.cli", "sandbox", *args)
    running = RunningSandbox(process.read_banner(started, _BANNER, "the sandbox"), started)
    process.wait_healthy(running.root, started, "the sandbox", timeout=15)
    return running


def _serve_sandbox(*args: str) -> RunningSandbox:
    """The sandbox of ``shopsync sandbox ARGS --port 0``, from the command's own options."""
    from pipelines.cli.servers import sandbox as command
    from pipelines.cli.servers import sandbox_settings
    from sandbox.marketing.serve import serve_in_thread

    options = command.make_context("sandbox", [*args, "--port", "0"]).params
    served, banner = serve_in_thread(sandbox_settings(**options))
    match = _BANNER.search(banner)
    assert match is not None, banner
    return RunningSandbox(match.group(1), served)


def new_key() -> str:
    """A well-formed key nobody has used: with ``--accept-any-key`` it opens an empty shop."""
    return f"t{secrets.token_hex(4)[:7]}.{secrets.token_urlsafe(12)}"


def new_kpi_key() -> str:
    return f"kpi-{secrets.token_hex(12)}"


def polled(condition: Callable[[], T], timeout: float) -> T:
    """The first truthy answer of ``condition``, asked again every 50 ms, or its last answer
    once ``timeout`` seconds have passed: for a test that words its own failure."""
    deadline = time.monotonic() + timeout
    while not (answer := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer


def eventually(condition: Callable[[], T], what: str, timeout: float = 10.0) -> T:
    """The first truthy answer of ``condition``, asked again every 50 ms: for what a server
    does on its own schedule. Fails naming ``what`` after ``timeout`` seconds: a bound far
    above the time it takes, so a slow machine waits longer and only a hang fails."""
    answer = polled(condition, timeout)
    assert answer, f"{what}: not within {timeout} s"
    return answer


def shopsync_here(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``shopsync ARGS`` run in this process (click's runner) with ``env`` added, as the
    ``CompletedProcess`` a real process would give: for the commands a test arranges with or
    reads back, where the process itself is not the subject."""
    from click.testing import CliRunner

    from pipelines.cli import main

    result = CliRunner().invoke(main, list(args), env=env)
    return subprocess.CompletedProcess(["shopsync", *args], result.exit_code,
                                       result.stdout, result.stderr)


def applicable(drivers: Sequence[D], metafunc: pytest.Metafunc) -> list[D]:
    """The drivers a kit's test takes: all but those declaring its case (the ``case``
    marker) meaningless for their kind of source (``not_applicable = {case: why}``, e.g. a
    database has no rate limit): such pairs are not generated at all rather than skipped."""
    marker = metafunc.definition.get_closest_marker("case")
    case = marker.args[0] if marker else None
    return [d for d in drivers if case not in getattr(d, "not_applicable", {})]


def released_together(commands: Sequence[Sequence[str]], folder: Path, *, env: dict[str, str],
                      bound: float, cwd: Path | None = None,
                      before_release: Callable[[], object] = lambda: None,
                      ) -> tuple[list[int], list[str], list[int]]:
    """Start each command as its own process, let them all reach a barrier, and release them
    at once: each command takes two more arguments, the barrier's path (it waits until the
    file exists) and its own "ready" file (it writes it once at the barrier).
    ``before_release`` runs when all are ready. Returns their exit codes, their stderr and
    their pids; a command that ends before the barrier ends the wait (its code says why)."""
    barrier = folder / "go"
    started = []
    for n, command in enumerate(commands):
        err = (folder / f"process-{n}.err").open("w")
        started.append((subprocess.Popen(
            [*command, str(barrier), str(folder / f"ready-{n}")], env=env, cwd=cwd, text=True,
            stdout=subprocess.DEVNULL, stderr=err), err))
    try:
        eventually(lambda: all((folder / f"ready-{n}").exists() for n in range(len(commands)))
                   or any(p.poll() is not None for p, _ in started),
                   "every process at the barrier", timeout=bound)
        before_release()
        barrier.touch()
        codes = [process.wait(timeout=bound) for process, _ in started]
    finally:
        for process, err in started:
            process.kill()
            process.wait()
            err.close()
    outputs = [(folder / f"process-{n}.err").read_text() for n in range(len(commands))]
    return codes, outputs, [process.pid for process, _ in started]
