"""A process of the engine's own beside a run: a fresh interpreter (``python -m MODULE``)
on this one's import path, spoken to over two pipes — requests one way, answers the other,
each message pickled (``multiprocessing.connection.Connection`` over the pipes' ends). The
run reads the answers on its event loop (``Answers``), not in a worker thread.

Not multiprocessing's ``spawn``: that re-runs the caller's main module in the child, and a
script without a ``__main__`` guard would start itself again. Not ``fork``: the run's
threads (Dagster's, the ledger's pool) do not survive it. The child ignores Ctrl-C, which
a terminal sends it too: it ends when its pipes close — when the run is done with it — or
when it is killed.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pickle
import signal
import struct
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

#: seconds a process that was asked to end is given before it is killed
STOP_SECONDS = 5.0


class Child:
    """One process running ``module``'s ``main``; started by ``start``, ended by ``stop``."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._process: subprocess.Popen[bytes] | None = None
        #: where requests go, and where answers come from
        self._ask: Connection | None = None
        self._answers: Answers | None = None

    @property
    def started(self) -> bool:
        return self._process is not None

    def start(self) -> tuple[Connection, Answers]:
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
            self._answers = Answers(answers)
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


class Answers:
    """The answers' pipe, read on the event loop as ``Connection.recv`` would read it.

    A worker thread blocked in ``recv`` lets the GIL go for each read of the pipe and must
    take it back after; beside a busy event loop it waits for it each time, and so did each
    page the run took (the same happened to the ledger's record, ``state/many.py``). On the
    loop, a page is taken when the loop is free for it, at once."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd
        self._reader: asyncio.StreamReader | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def receive(self) -> Any:
        """The next message (``EOFError``: the process closed its end)."""
        if self._reader is None:
            if self._fd is None:
                raise EOFError("the answers' pipe is closed")
            self._loop = asyncio.get_running_loop()
            reader = self._reader = asyncio.StreamReader()
            self._transport, _ = await self._loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), open(self._fd, "rb", buffering=0))
            self._fd = None  # the transport's now
        try:
            # ``Connection.send``'s framing: a big-endian length (-1: an 8-byte one follows)
            (size,) = struct.unpack("!i", await self._reader.readexactly(4))
            if size == -1:
                (size,) = struct.unpack("!Q", await self._reader.readexactly(8))
            return pickle.loads(await self._reader.readexactly(size))
        except asyncio.IncompleteReadError as exc:
            raise EOFError("the process closed its answers' pipe") from exc

    def close(self) -> None:
        """Close the pipe: on the loop reading it, or handed to it from another thread."""
        transport, self._transport = self._transport, None
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        if transport is None or self._loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            transport.close()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(transport.close)


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
