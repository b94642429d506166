"""Where a sync's time goes, stage by stage: the wall and CPU time that stream runs sharing a
``StageTimer`` spend reading, mapping, validating, checking quality, diffing, writing the
ledger and pushing (``bench/sync.py`` prints them).

A light hook, not a profiler: a stream run times whole pages and chunks, never single
records, and without a timer (the default) each hook is a shared no-op context.

Wall time: a chunk's delivery runs beside the next chunk's work, so stages overlap: each
moment is credited to the stage entered last of those still open (the one the thread is
in), and no moment twice; the stages' shares of a sync add up to at most the whole.

CPU time is the syncing thread's (``time.thread_time_ns``), and that of the work it hands a
worker thread (the ledger's record: ``counted``); the great-expectations import in its own
thread shows as the quality step's wait (``gx wait``), wall time without CPU. Each task
has its own open stages (a context variable): while one task waits in its read, another
pushes. Run under ``StageTimer.run``, each step of each task is timed, and its CPU goes to
the stage that task is in — a push's HTTP work to the push, not to the read the stream
waits in — and the event loop's own work between steps (its callbacks, the sockets'
reads) to ``LOOP``; ``UNSTAGED``, what tasks do outside any stage.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

#: the stages of a stream run, in the order a chunk meets them
STAGES = ("read", "map", "validate", "gx wait", "quality", "diff", "ledger", "push")
#: CPU of the event loop between tasks' steps (``StageTimer.run``)
LOOP = "event loop"
#: CPU of tasks' steps outside any stage (stream setup, reports, the probe)
UNSTAGED = "unstaged"


@dataclass
class StageTime:
    """What one stage took, summed over the runs that shared the timer."""

    wall_ns: int = 0
    cpu_ns: int = 0
    #: how many times it was entered (pages read, chunks checked, …)
    calls: int = 0
    #: CPU of its work handed to a worker thread (``StageTimer.counted``)
    worker_cpu_ns: int = 0


#: the stages the current task is in, the current one last (each task has its own)
_IN: ContextVar[tuple[StageTime, ...]] = ContextVar("shopsync_stages", default=())


class StageTimer:
    """Accumulates wall and CPU nanoseconds per stage; ``stage`` is entered per page or
    chunk. Stages may be open together (a delivery beside the next chunk): the wall time
    since the last change goes to the one entered last, the CPU time to the stage of the
    task that spent it."""

    def __init__(self) -> None:
        self.times: dict[str, StageTime] = {name: StageTime() for name in STAGES}
        self.loop = StageTime()
        self.unstaged = StageTime()
        #: the stages entered and not yet left, the current one last
        self._open: list[StageTime] = []
        self._since = 0
        self._cpu_since = 0
        #: inside ``run``: between two tasks' steps (the event loop's own work)
        self._between_steps = False
        #: CPU seconds a read process spent on the runs' streams, by its own stages
        #: (``read_process.ReadCosts``)
        self.read_process: dict[str, float] = {}

    def _credit(self) -> None:
        """The wall time since the last change goes to the current stage."""
        wall = time.perf_counter_ns()
        if self._open:
            self._open[-1].wall_ns += wall - self._since
        self._since = wall

    def _charge(self) -> None:
        """The CPU time since the last change goes to the stage the running task is in."""
        cpu = time.thread_time_ns()
        if self._cpu_since:
            if self._between_steps:
                owner = self.loop
            else:
                stack = _IN.get()
                owner = stack[-1] if stack else self.unstaged
            owner.cpu_ns += cpu - self._cpu_since
        self._cpu_since = cpu

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        spent = self.times.setdefault(name, StageTime())
        self._credit()
        self._charge()
        self._open.append(spent)
        _IN.set((*_IN.get(), spent))
        spent.calls += 1
        try:
            yield
        finally:
            self._credit()
            self._charge()
            # its last entry, which need not be the current one: a delivery's stage may
            # end while the next chunk's is open
            self._open = _without_last(self._open, spent)
            # as the wall's; a stage may also end in another context than it began in (an
            # async generator closed by another task), where it is not open
            _IN.set(tuple(_without_last(_IN.get(), spent)))

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``await coro``, each step of it and of the tasks it starts timed: the CPU of a
        step goes to the stage its task is in, the loop's between steps to ``LOOP``."""
        loop = asyncio.get_running_loop()
        before = loop.get_task_factory()

        def timed_task(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
            return asyncio.Task(_Steps(coro, self), loop=loop, **kwargs)

        loop.set_task_factory(timed_task)
        self._charge()
        try:
            return await loop.create_task(coro)
        finally:
            loop.set_task_factory(before)
            self._charge()
            self._between_steps = False

    def _step_begins(self) -> None:
        """A task's step begins (``run``): the CPU since the last step was the loop's."""
        self._charge()
        self._between_steps = False

    def _step_ends(self) -> None:
        """A task's step ends: its CPU goes to the stage its task is in."""
        self._charge()
        self._between_steps = True

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

    def add_read_process(self, seconds: Mapping[str, float]) -> None:
        """A read process's CPU for one stream, by its stage, added to the runs'."""
        for name, spent in seconds.items():
            self.read_process[name] = self.read_process.get(name, 0.0) + spent

    def elsewhere(self) -> dict[str, float]:
        """CPU seconds of the syncing thread outside the stages: ``LOOP`` (between steps,
        under ``run``) and ``UNSTAGED``."""
        return {LOOP: self.loop.cpu_ns / 1e9, UNSTAGED: self.unstaged.cpu_ns / 1e9}


def _without_last(stages: Sequence[StageTime], spent: StageTime) -> list[StageTime]:
    """``stages`` without the last entry that is ``spent`` itself (an equal one is not it);
    as they were when it has none."""
    at = next((i for i in range(len(stages) - 1, -1, -1) if stages[i] is spent), None)
    return list(stages) if at is None else [*stages[:at], *stages[at + 1:]]


_OFF = nullcontext()


def stage(timer: StageTimer | None, name: str) -> AbstractContextManager[object]:
    """``timer.stage(name)``, or a no-op when the run has no timer."""
    return _OFF if timer is None else timer.stage(name)


def counted(timer: StageTimer | None, name: str, call: Callable[[], T]) -> T:
    """``timer.counted(name, call)``, or just ``call()`` when the run has no timer."""
    return call() if timer is None else timer.counted(name, call)


class _Steps(Coroutine[Any, Any, Any]):
    """A task's coroutine, each step (``send``, ``throw``) timed by ``timer``: the loop's
    CPU before the step is the loop's, the step's is its task's stage's. Everything else —
    the state ``inspect`` and anyio read — is the coroutine's own."""

    __slots__ = ("_coro", "_timer")

    def __init__(self, coro: Coroutine[Any, Any, Any], timer: StageTimer) -> None:
        self._coro = coro
        self._timer = timer

    def send(self, value: Any) -> Any:
        self._timer._step_begins()
        try:
            return self._coro.send(value)
        finally:
            self._timer._step_ends()

    def __next__(self) -> Any:
        return self.send(None)

    def throw(self, *args: Any) -> Any:
        self._timer._step_begins()
        try:
            return self._coro.throw(*args)
        finally:
            self._timer._step_ends()

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._coro.__await__()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._coro, name)
