"""Request budgets in the state store, on SQLite and PostgreSQL: concurrent reservers, each
with a store (and connections) of its own as separate processes would have, get slots one
interval apart and never the same one. The clock is the test's (``now=``) wherever the
arithmetic is checked, so nothing depends on the machine's speed."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipelines.engine.state import StateStore
from pipelines.engine.state.budgets import Slots
from tests.engine.state_support import OpenStore

INTERVAL = 0.25


def test_an_idle_budget_starts_now_and_a_busy_one_after_its_last_slot(store: StateStore) -> None:
    first = store.reserve_slots("shop a", INTERVAL, now=1000.0)
    assert (first.start, first.now, first.delays()) == (1000.0, 1000.0, [0.0])
    second = store.reserve_slots("shop a", INTERVAL, now=1000.1)
    assert second.delays() == [pytest.approx(0.15)]
    other = store.reserve_slots("shop b", INTERVAL, now=1000.1)
    assert other.delays() == [0.0], "each budget is its own"
    later = store.reserve_slots("shop a", INTERVAL, now=2000.0)
    assert later.start == 2000.0, "an idle budget saves nothing up: no burst after a pause"


def test_a_block_of_slots_is_reserved_in_one_go(store: StateStore) -> None:
    block = store.reserve_slots("key", INTERVAL, 4, now=50.0)
    assert block.delays() == pytest.approx([0.0, 0.25, 0.5, 0.75])
    assert store.reserve_slots("key", INTERVAL, now=50.0).start == pytest.approx(51.0)


def test_concurrent_reservers_with_stores_of_their_own_never_share_a_slot(
    open_store: OpenStore,
) -> None:
    reservers, each = 6, 15
    stores = [open_store() for _ in range(reservers)]
    start = threading.Barrier(reservers)

    def reserve(store: StateStore) -> list[Slots]:
        start.wait()
        # the clock each reserver reads moves on, as it would, but the same for all
        return [store.reserve_slots("one key", INTERVAL, 1 + n % 2, now=100.0 + n * 0.01)
                for n in range(each)]

    with ThreadPoolExecutor(reservers) as pool:
        got = [slot for reserved in pool.map(reserve, stores) for slot in reserved]

    times = sorted(s.start + k * s.interval for s in got for k in range(s.count))
    assert len(set(times)) == len(times), "no two reservers got the same slot"
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= INTERVAL - 1e-9
    # every reserver asked before the first slot was due (its clock at 100.0, then at
    # most 0.14 s later): the slots follow one another from the first reservation's clock
    assert times == pytest.approx([100.0 + i * INTERVAL for i in range(len(times))])


def test_on_the_databases_clock_slots_are_still_one_interval_apart(store: StateStore) -> None:
    before = time.time()
    slots = [store.reserve_slots("db clock", INTERVAL) for _ in range(5)]
    starts = [s.start for s in slots]
    assert [b - a for a, b in zip(starts, starts[1:], strict=False)] == pytest.approx(
        [INTERVAL] * 4)
    assert slots[0].delays() == [0.0]
    if store.dialect == "sqlite":  # the one machine's clock (PostgreSQL's may differ)
        assert before <= slots[0].start <= time.time()
    assert slots[-1].delays()[0] == pytest.approx(4 * INTERVAL, abs=0.2)


def test_a_reservation_inside_an_open_transaction_is_refused(store: StateStore) -> None:
    """Others must see a reservation at once, so it commits on its own; inside the
    caller's transaction it would wait for that transaction's own lock (SQLite)."""
    with store.transaction(), pytest.raises(RuntimeError, match="outside"):
        store.reserve_slots("shared", INTERVAL, now=10.0)
    assert store.reserve_slots("shared", INTERVAL, now=10.0).start == 10.0
