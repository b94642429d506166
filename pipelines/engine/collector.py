"""Python's cyclic garbage collector, paced for a sync.

A sync allocates millions of short-lived containers (records, items, outcomes) that
reference counting frees at once. The collector still runs every 700 net allocations and,
as the heap grows, scans every object the process holds: Dagster's, great-expectations'
and pandas' modules included. At 100 000 orders from a drop folder that was 7 400
collections taking 5.5 s, about a sixth of the syncing process's CPU
(``bench/sync.py``). While a sync runs, what existed before it is frozen (it lives as long
as the process: scanning it finds nothing) and the youngest generation is collected every
50 000 allocations; the settings are put back when the last running sync ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: net allocations between collections of the youngest generation (Python's default: 700)
YOUNGEST = 50_000

_lock = threading.Lock()
_running = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def paced_for_sync() -> Iterator[None]:
    """Collect less often while the block runs (nested and concurrent blocks share it)."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(YOUNGEST, _saved[0]), _saved[1], _saved[2])
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()


def freeze_held() -> None:
    """While a sync paces the collector, what exists now is frozen too: a package imported
    during the sync (great-expectations, in its own thread) holds objects that every later
    collection would scan again, for nothing. Outside a sync it does nothing: what it would
    freeze then might never be let go."""
    with _lock:
        if _running:
            gc.freeze()
