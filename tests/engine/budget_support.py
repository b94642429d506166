"""What the end-to-end tests of a shared request budget check a server's arrival times
against (``test_budgets_processes.py``: a shop's budget, ``test_budgets_destination.py``: a
destination key's): the budget's arithmetic, never the machine's speed.

Every request leaves at its slot or later, the slots of a budget are one interval apart
whoever took them, and the test itself takes the slot before ``T0``; so the k-th request
the server saw (from 0) arrived at ``T0 + k × interval`` at the earliest, however late any
process ran. Two processes pacing only themselves would send twice as fast, and break it
as soon as both are up (``T0`` is set a little ahead so that they are).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from pipelines.engine.state import StateStore

#: the arrival times' resolution: both clocks are this machine's
EPSILON = 0.002


def first_slot_at(db_url: str, budget: str, rate: float, head_start: float) -> float:
    """``T0``, ``head_start`` seconds from now: the test takes the slot just before it, so
    that the first slot any process gets of ``budget`` is ``T0`` or later."""
    interval = 1 / rate
    with StateStore(db_url) as store:
        t0 = time.time() + head_start
        store.reserve_slots(budget, interval, now=t0 - interval)
    return t0


def assert_within_budget(arrivals: Iterable[float], t0: float, rate: float, *,
                         at_least: int = 30) -> None:
    """No arrival ahead of the budget's slots from ``T0`` on, and ``at_least`` of them
    (two processes' tests: enough from each to tell the budget from two)."""
    interval = 1 / rate
    seen = sorted(arrivals)
    early = [(k, at - (t0 + k * interval)) for k, at in enumerate(seen)
             if at < t0 + k * interval - EPSILON]
    span = seen[-1] - seen[0] if len(seen) > 1 else 0.0
    print(f"\n{len(seen)} requests in {span:.2f} s"
          f" ({(len(seen) - 1) / (span or 1):.1f}/s, budget {rate:.0f}/s);"
          f" first {seen[0] - t0 if seen else 0:+.2f} s after T0")
    assert len(seen) >= at_least, f"{len(seen)} requests, fewer than {at_least}"
    assert not early, f"requests ahead of the shared budget (k, seconds early): {early[:5]}"
