"""Where a sync's time goes, stage by stage: the wall and CPU time that stream runs sharing a
``StageTimer`` spend reading, mapping, validating, checking quality, diffing, writing the
ledger and pushing (``bench/sync.py`` prints them).

A light hook, not a profiler: a stream run times whole pages and chunks, never single
records, and without a timer (the default) each hook is a shared no-op context. CPU time is
the syncing thread's (``time.thread_time_ns``): the great-expectations import in its own
thread shows as the quality step's wait (``gx wait``), wall time without CPU.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

#: the stages of a stream run, in the order a chunk meets them
STAGES = ("read", "map", "validate", "gx wait", "quality", "diff", "ledger", "push")


@dataclass
class StageTime:
    """What one stage took, summed over the runs that shared the timer."""

    wall_ns: int = 0
    cpu_ns: int = 0
    #: how many times it was entered (pages read, chunks checked, …)
    calls: int = 0


class StageTimer:
    """Accumulates wall and CPU nanoseconds per stage; ``stage`` is entered per page or
    chunk, one stage at a time (stages do not nest)."""

    def __init__(self) -> None:
        self.times: dict[str, StageTime] = {name: StageTime() for name in STAGES}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            yield
        finally:
            spent = self.times.setdefault(name, StageTime())
            spent.wall_ns += time.perf_counter_ns() - wall
            spent.cpu_ns += time.thread_time_ns() - cpu
            spent.calls += 1

    def seconds(self) -> dict[str, tuple[float, float]]:
        """Stage -> (wall seconds, CPU seconds)."""
        return {name: (t.wall_ns / 1e9, t.cpu_ns / 1e9) for name, t in self.times.items()}


_OFF = nullcontext()


def stage(timer: StageTimer | None, name: str) -> AbstractContextManager[object]:
    """``timer.stage(name)``, or a no-op when the run has no timer."""
    return _OFF if timer is None else timer.stage(name)
