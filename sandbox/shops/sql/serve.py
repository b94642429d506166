"""Holding a fake that is not a server: print the banner, stay up until stopped, clean up.

A database file or a drop folder has nothing to serve, but ``shopsync demo`` and the tests
start every fake the same way — a command whose first line names the address — and stop it
with SIGTERM; the fake then removes what it wrote.
"""

from __future__ import annotations

import shutil
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import click


def hold(banner: str, cleanup: Callable[[], None] = lambda: None) -> None:
    """Print ``banner`` (one line), wait for SIGTERM or Ctrl-C, then ``cleanup``."""
    stopped = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        click.echo(banner)
        sys.stdout.flush()
        try:
            while not stopped.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        cleanup()


def remover(folder: Path, keep: bool) -> Callable[[], None]:
    return (lambda: None) if keep else (lambda: shutil.rmtree(folder, ignore_errors=True))
