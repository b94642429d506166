"""The quality suites run in a process of their own, beside the sync.

great-expectations costs 3 to 5 CPU-s to import (and ~250 MB). In the syncing process that
import, and every chunk's suite after it, would compete with the sync for the one interpreter
lock: a thread does not make them overlap. A worker process does, on another core: it starts
when a sync starts (``prepare``), imports great-expectations and plans the suites while the
sync opens its connections and reads its first pages, and each chunk's checks then cost the
sync a round trip over a pipe (the items pickled out, the report back) instead of the checks'
own CPU. The syncing process never imports great-expectations.

The worker is ``concurrent.futures.ProcessPoolExecutor`` with one process, started with
``spawn`` (the syncing process has threads: a fork could copy a held lock), kept for the
process's life and shared by its syncs. It ignores Ctrl-C (the syncing process decides how
to stop) and exits when that process does, however it ends. If it dies (killed, out of
memory), the call is made again in a new one; a second death stops the sync with
``QualityUnavailable``, naming the cause, rather than holding items back for it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import signal
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from pipelines.engine.quality import check
from pipelines.engine.quality.check import QualityReport


class QualityUnavailable(RuntimeError):
    """The process running the quality suites died twice in one call: the checks cannot run,
    so nothing can be sent (the items are not at fault)."""


_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None
#: resources whose suites the current worker was asked to plan
_planned: set[str] = set()
_stop_registered = False


def _exit_with_parent(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def _serve() -> None:
    """The worker's start: no Ctrl-C of its own, and gone as soon as its parent is."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent.sentinel,),
                         name="quality-parent-watch", daemon=True).start()


def _worker() -> ProcessPoolExecutor:
    global _executor, _stop_registered
    with _lock:
        if _executor is None:
            _executor = ProcessPoolExecutor(max_workers=1, initializer=_serve,
                                            mp_context=multiprocessing.get_context("spawn"))
            _planned.clear()
            if not _stop_registered:
                # before multiprocessing's exit joins this process's children: a process
                # that is itself a multiprocessing child (Dagster's run worker) ends there,
                # without the interpreter's own exit, where the executor would be shut down
                multiprocessing.util.Finalize(None, stop, exitpriority=100)
                _stop_registered = True
        return _executor


def _discard(executor: ProcessPoolExecutor, *, wait: bool = False) -> None:
    global _executor
    with _lock:
        if _executor is executor:
            _executor = None
    executor.shutdown(wait=wait, cancel_futures=True)


def prepare(resources: Iterable[str]) -> None:
    """Start the worker and have it plan the suites of ``resources`` (importing
    great-expectations), without waiting: the first check of a resource queues behind it.
    A worker that cannot start is left to the first check to report."""
    todo = set(resources) - _planned
    if not todo:
        return
    executor = _worker()
    try:
        executor.submit(check.plan, sorted(todo))
    except (BrokenProcessPool, OSError):
        _discard(executor)
        return
    _planned.update(todo)


def check_items(
    resource: str,
    items: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    known: Mapping[str, set[str]] | None = None,
    after_models: bool = False,
) -> QualityReport:
    """``check.check_items`` run by the worker (see there).

    Raises:
        QualityUnavailable: the worker could not start, or died, twice.
    """
    if not items:  # nothing to judge: no suite, no round trip
        return check.check_items(resource, items, known=known, after_models=after_models)
    batch = list(items)
    causes: list[str] = []
    for _attempt in (1, 2):
        executor = _worker()
        try:
            future = executor.submit(check.check_items, resource, batch, known=known,
                                     after_models=after_models)
        except (BrokenProcessPool, OSError) as exc:  # it cannot start
            causes.append(f"{type(exc).__name__}: {exc}")
        else:
            try:
                return future.result()
            except BrokenProcessPool as exc:  # it died on the way
                causes.append(str(exc))
        _discard(executor)
    raise QualityUnavailable(
        f"the process running the quality checks of {resource} stopped twice"
        f" ({'; then '.join(dict.fromkeys(causes))}); look for it being killed, e.g. out of"
        " memory")


def stop() -> None:
    """Stop the worker and wait for it to exit (a new one starts at the next call): at the
    process's exit, and for tests."""
    with _lock:
        executor = _executor
    if executor is not None:
        _discard(executor, wait=True)
