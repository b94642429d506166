"""Where a sync's time goes, stage by stage: the wall and CPU time that stream runs sharing a
``StageTimer`` spend reading, mapping, validating, checking quality, diffing, writing the
ledger and pushing (``bench/sync.py`` prints them).

A light hook, not a profiler: a stream run times whole pages and chunks, never single
records, and without a timer (the default) each hook is a shared no-op context. CPU time is
the syncing thread's (``time.thread_time_ns``), and that of the work it hands a worker
thread (the ledger's record: ``counted``); the great-expectations import in its own
thread shows as the quality step's wait (``gx wait``), wall time without CPU.

A chunk's delivery runs beside the next chunk's work, so stages overlap: each moment is
credited to the stage entered last of those still open (the one the thread is in), and
no moment twice; the stages' shares of a sync add up to at most the whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: the stages of a stream run, in the order a chunk meets them
STAGES = ("read", "map", "validate", "gx wait", "quality", "diff", "ledger", "push")


@dataclass
class StageTime:
    """What one stage took, summed over the runs that shared the timer."""

    wall_ns: int = 0
    cpu_ns: int = 0
    #: how many times it was entered (pages read, chunks checked, …)
    calls: int = 0
    #: CPU of its work handed to a worker thread (``StageTimer.counted``)
    worker_cpu_ns: int = 0


class StageTimer:
    """Accumulates wall and CPU nanoseconds per stage; ``stage`` is entered per page or
    chunk. Stages may be open together (a delivery beside the next chunk): the time since
    the last change goes to the one entered last."""

    def __init__(self) -> None:
        self.times: dict[str, StageTime] = {name: StageTime() for name in STAGES}
        #: the stages entered and not yet left, the current one last
        self._open: list[StageTime] = []
        self._since = (0, 0)

    def _credit(self) -> None:
        """The time since the last change goes to the current stage."""
        wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
        if self._open:
            current = self._open[-1]
            current.wall_ns += wall - self._since[0]
            current.cpu_ns += cpu - self._since[1]
        self._since = (wall, cpu)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        spent = self.times.setdefault(name, StageTime())
        self._credit()
        self._open.append(spent)
        spent.calls += 1
        try:
            yield
        finally:
            self._credit()
            # its last entry, which need not be the current one: a delivery's stage may
            # end while the next chunk's is open
            at = max(i for i, s in enumerate(self._open) if s is spent)
            del self._open[at]

    def counted(self, name: str, call: Callable[[], T]) -> T:
        """``call()``, run in a worker thread, its CPU time credited to stage ``name`` (the
        syncing thread's clock does not see it). One worker at a time per stage."""
        spent = self.times.setdefault(name, StageTime())
        cpu = time.thread_time_ns()
        try:
            return call()
        finally:
            spent.worker_cpu_ns += time.thread_time_ns() - cpu

    def seconds(self) -> dict[str, tuple[float, float]]:
        """Stage -> (wall seconds, CPU seconds: the syncing thread's and its workers')."""
        return {name: (t.wall_ns / 1e9, (t.cpu_ns + t.worker_cpu_ns) / 1e9)
                for name, t in self.times.items()}


_OFF = nullcontext()


def stage(timer: StageTimer | None, name: str) -> AbstractContextManager[object]:
    """``timer.stage(name)``, or a no-op when the run has no timer."""
    return _OFF if timer is None else timer.stage(name)


def counted(timer: StageTimer | None, name: str, call: Callable[[], T]) -> T:
    """``timer.counted(name, call)``, or just ``call()`` when the run has no timer."""
    return call() if timer is None else timer.counted(name, call)
