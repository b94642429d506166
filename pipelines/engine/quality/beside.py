"""The quality suites judged by great-expectations in a process of their own, beside the
sync (``tuning.quality_process``).

GX costs a run's process seconds of CPU to import and then, per chunk, more to judge a
suite than to frame the chunk for it. Here the run frames each chunk (``check.framed``: it
reads the items and the ledger's known products) and this process (``child.py``) judges the
frame, while the run waits for the chunk before it to be delivered (``gate.QualityCheck``):
GX is off the run's critical path and out of its memory. The process plans the suites a
run will use when the run first has items to check (``prepare``, as in process), is kept
for the runs after it in the same process — GX and the plans are paid once per process, as
in process — and ends with it (its pipes close). If it dies, the next call starts another.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from pipelines.engine.child import Child, pipes, portable
from pipelines.engine.quality.check import Batch, Described, describe, judged_here

Outcomes = dict[str, tuple[list[str], str | None]]


class SuiteProcess:
    """The process judging suites for the runs of this process that ask for it."""

    def __init__(self) -> None:
        self._child = Child(__name__)
        self._lock = threading.Lock()
        #: resource -> its suite as described by the process (None: it has none)
        self._described: dict[str, Described | None] = {}
        self._planning: threading.Thread | None = None

    def prepare(self, resources: Iterable[str]) -> threading.Thread | None:
        """Start the process if needed and have it plan the suites of ``resources`` (GX's
        import, at its first), in a thread: the run reads on meanwhile."""
        todo = [r for r in resources if r not in self._described]
        if not todo:
            return None
        thread = threading.Thread(target=self._plan, args=(todo,), name="quality-beside",
                                  daemon=True)
        thread.start()
        self._planning = thread
        return thread

    def pending(self, resource: str) -> bool:
        """Whether ``resource``'s suite is still being planned (``check.suite_pending``)."""
        return (resource not in self._described and self._planning is not None
                and self._planning.is_alive())

    def described(self, resource: str) -> Described | None:
        """``resource``'s suite, waiting for its plan (made now when nothing is making it)."""
        if resource not in self._described:
            self._plan([resource])
        return self._described.get(resource)

    def judge(self, batch: Batch) -> Outcomes:
        """Rule name -> (keys of the items breaking it, error) for ``batch`` (blocking: call
        it off the event loop)."""
        outcomes: Outcomes = self._ask(("judge", batch.resource, batch.frame, batch.runnable))
        return outcomes

    def _plan(self, resources: list[str]) -> None:
        described: dict[str, Described | None] = self._ask(("plan", resources))
        self._described.update(described)

    def _ask(self, message: tuple[Any, ...]) -> Any:
        """One request and its answer, one at a time; a process that died is replaced at
        the next request (its plans with it)."""
        with self._lock:
            ask, answers = self._child.start()
            try:
                ask.send(message)
                kind, value = answers.recv()
            except (OSError, EOFError):
                self._child.stop(wait=False)
                self._described.clear()
                raise RuntimeError("the quality process ended unexpectedly") from None
        if kind == "error":
            raise value
        return value

    @property
    def pid(self) -> int | None:
        """Its process's id, while it runs."""
        return self._child.pid

    def stop(self) -> None:
        with self._lock:
            self._child.stop()
            self._described.clear()


_process: SuiteProcess | None = None


def suite_process() -> SuiteProcess:
    """This process's suite process (started at its first request)."""
    global _process
    if _process is None:
        _process = SuiteProcess()
    return _process


def _answer(message: tuple[Any, ...]) -> Any:
    if message[0] == "plan":
        return {resource: describe(resource) for resource in message[1]}
    _, resource, frame, names = message
    return judged_here(resource, frame, names)


def main() -> None:
    """The process (``python -m pipelines.engine.quality.beside``): plan and judge what it
    is asked, until asked to end."""
    requests, answers = pipes()
    try:
        while (message := requests.recv()) is not None:
            try:
                answer = ("ok", _answer(message))
            except Exception as exc:  # noqa: BLE001 - raised in the run, where it asked
                answer = ("error", portable(exc, RuntimeError))
            answers.send(answer)
    except (EOFError, BrokenPipeError):
        pass  # the process it served has ended


if __name__ == "__main__":
    main()
