"""A running ``shopsync dev`` and the processes below it (read from /proc): started on free
ports with its output in a file, where its UI and its fake shop are, and what a test needs to
see that Ctrl-C stops everything it started. ``bench/ui.py`` starts it the same way."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support import eventually, polled

#: starting three servers and Dagster's four processes on a crowded machine
START_BOUND = 300.0
#: Dagster stops its services within 60 s each; shopsync dev kills them after 150 s
STOP_BOUND = 200.0
#: how long a process ``shopsync dev`` started may outlive it once it has exited
LINGER_BOUND = 30.0


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (from /proc), zombies left out."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (not gone, not a zombie)."""
    running = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.add(pid)
    return running


@dataclass
class Dev:
    """A running ``shopsync dev``: its process, its output (a file: Dagster logs a lot, and a
    pipe nobody reads would stop it) and when it was started (monotonic)."""

    process: subprocess.Popen[bytes]
    log: Path
    started: float

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _said(self, pattern: str) -> str | None:
        found = re.search(pattern, self.output(), re.MULTILINE)
        return found.group(1) if found else None

    def wait_serving(self, timeout: float) -> str:
        """The UI's address, once ``shopsync dev`` prints it; fails when it exits first or
        after ``timeout`` seconds (a bound far above what it takes)."""
        def serving() -> str:
            assert self.process.poll() is None, f"shopsync dev exited:\n{self.output()}"
            return self._said(r"^Dagster UI at (http://\S+)") or ""

        return eventually(serving, "shopsync dev serving its UI", timeout=timeout)

    @property
    def shop_url(self) -> str:
        """The fake shop's root (its ``/__fake__`` API is there), as printed at the start."""
        url = self._said(r"fake \w+ shop (http://[^\s;]+)")
        assert url, f"shopsync dev did not say where its shop is:\n{self.output()}"
        return url

    def interrupt(self) -> tuple[int, set[int]]:
        """Ctrl-C, as in a terminal: its exit code, and what of its processes outlived it."""
        below = descendants(self.process.pid)
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=STOP_BOUND)
        # a process it started may end a moment after it: one that notices its parent's end
        # by looking now and then (as Dagster's orphan watcher does) — but within a bound
        polled(lambda: not alive(below), LINGER_BOUND)
        return code, alive(below)

    def stop(self) -> None:
        """Ctrl-C unless it has stopped; past its bound, kill it and all below it."""
        if self.process.poll() is not None:
            return
        below = descendants(self.process.pid)
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            for pid in alive(below | {self.process.pid}):
                os.kill(pid, signal.SIGKILL)
            self.process.wait()


def start_dev(home: Path, log: Path, *options: str) -> Dev:
    """``shopsync dev [OPTIONS]`` on free ports with ``SHOPSYNC_HOME`` at ``home``, its
    schedules and sensors stopped (the only runs are the ones launched from the UI), its
    output in ``log``. Returns at once: ``wait_serving`` says when its UI answers."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SHOPSYNC_HOME": str(home)}
    for name in ("SHOPSYNC_CONFIG", "DAGSTER_HOME"):
        env.pop(name, None)
    with log.open("wb") as out:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "dev", "--port", "0", "--sandbox-port", "0",
             "--shop-port", "0", "--no-automation", *options],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=home,
        )
    return Dev(process, log, started)
