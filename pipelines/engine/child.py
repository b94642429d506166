"""A process of the engine's own beside a run: a fresh interpreter (``python -m MODULE``)
on this one's import path, spoken to over two pipes — requests one way, answers the other,
each message pickled (``multiprocessing.connection.Connection`` over the pipes' ends).

Not multiprocessing's ``spawn``: that re-runs the caller's main module in the child, and a
script without a ``__main__`` guard would start itself again. Not ``fork``: the run's
threads (Dagster's, the ledger's pool) do not survive it. The child ignores Ctrl-C, which
a terminal sends it too: it ends when its pipes close — when the run is done with it — or
when it is killed.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path

#: seconds a process that was asked to end is given before it is killed
STOP_SECONDS = 5.0


class Child:
    """One process running ``module``'s ``main``; started by ``start``, ended by ``stop``."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._process: subprocess.Popen[bytes] | None = None
        #: where requests go, and where answers come from
        self._ask: Connection | None = None
        self._answers: Connection | None = None

    @property
    def started(self) -> bool:
        return self._process is not None

    def start(self) -> tuple[Connection, Connection]:
        """The pipes of the process, started now if it is not running."""
        if self._process is None:
            requests, ask = os.pipe()
            answers, give = os.pipe()
            _widen(give)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", self.module, str(requests), str(give)],
                    pass_fds=(requests, give), env=env, stdin=subprocess.DEVNULL)
            finally:
                os.close(requests)
                os.close(give)
            self._ask = Connection(ask, readable=False)
            self._answers = Connection(answers, writable=False)
        assert self._ask is not None and self._answers is not None
        return self._ask, self._answers

    def stop(self, *, wait: bool = True) -> None:
        """End the process: told to (``None``) and given ``STOP_SECONDS`` when ``wait``,
        else killed at once."""
        process, ask, answers = self._process, self._ask, self._answers
        self._process = self._ask = self._answers = None
        if process is None or ask is None or answers is None:
            return
        try:
            if wait:
                ask.send(None)
                process.wait(STOP_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(STOP_SECONDS)
            ask.close()
            answers.close()


def pipes() -> tuple[Connection, Connection]:
    """In the child (its ``main``): the requests and answers pipes its parent gave it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return (Connection(int(sys.argv[1]), writable=False),
            Connection(int(sys.argv[2]), readable=False))


def _widen(pipe: int) -> None:
    """Give the answers' pipe the room an unprivileged process may (``fs.pipe-max-size``,
    1 MiB by default, against 64 KiB): the child works that far ahead — a few pages —
    while the run is busy, instead of waiting for each answer to be taken."""
    try:
        size = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, size)
    except (OSError, ValueError, AttributeError):
        pass  # not Linux: the pipe's own room
