"""A running ``shopsync dev`` and the processes below it (read from /proc): what a test
needs to see that Ctrl-C stops everything it started."""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: Dagster stops its services within 60 s each; shopsync dev kills them after 150 s
STOP_BOUND = 200.0


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
    pipe nobody reads would stop it), when it was started and where its UI is."""

    process: subprocess.Popen[bytes]
    log: Path
    started: float
    url: str = ""

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def interrupt(self) -> tuple[int, set[int]]:
        """Ctrl-C, as in a terminal: its exit code, and what of its processes outlived it."""
        below = descendants(self.process.pid)
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=STOP_BOUND)
        return code, alive(below)
