"""What the state store keeps of a sync's progress: cursors per source and stream, and
the runs, on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from connectors.sources.base import Position
from pipelines.engine.state import StateStore
from tests.engine.state_support import S

# -- cursors


def test_a_cursor_comes_back_in_utc_with_its_id(store: StateStore) -> None:
    assert store.get_cursor(S, "orders") is None
    local = datetime(2024, 3, 31, 1, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    store.set_cursor(S, "orders", Position(local, "00042"))

    back = store.get_cursor(S, "orders")
    assert back == Position(local, "00042")
    assert back is not None and back.changed_at.tzinfo is UTC
    assert back.changed_at == datetime(2024, 3, 30, 23, 30, 15, 123456, tzinfo=UTC)
    assert back.record_id == "00042"


def test_a_cursor_is_per_source_and_stream_and_can_move_or_go(store: StateStore) -> None:
    early, late = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)
    store.set_cursor(S, "orders", Position(early, "1"))
    store.set_cursor(S, "products", Position(early))
    store.set_cursor("shop-b", "orders", Position(late, "9"))
    store.set_cursor(S, "orders", Position(late, "2"))

    assert store.get_cursor(S, "orders") == Position(late, "2")
    assert store.get_cursor(S, "products") == Position(early, "")
    assert store.cursors(S) == {
        (S, "orders"): Position(late, "2"),
        (S, "products"): Position(early, ""),
    }
    store.delete_cursor(S, "orders")
    assert store.get_cursor(S, "orders") is None
    assert store.get_cursor("shop-b", "orders") == Position(late, "9")


# -- runs


def test_runs_are_recorded_and_listed_newest_first(store: StateStore) -> None:
    start, end = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)
    first = store.start_run(S, None, "sync")
    second = store.start_run(S, "orders", "backfill", window_start=start, window_end=end)
    other = store.start_run("shop-b", None, "reconcile")

    running = store.get_run(second)
    assert running is not None
    assert (running.status, running.finished_at, running.counts) == ("running", None, {})
    assert (running.window_start, running.window_end) == (start, end)

    store.finish_run(first, "succeeded", {"accepted": 10, "seconds": 1.5})
    store.finish_run(second, "failed", {}, error="API down")
    done = store.get_run(first)
    assert done is not None and done.status == "succeeded"
    assert done.counts == {"accepted": 10, "seconds": 1.5}
    assert done.finished_at is not None and done.finished_at >= done.started_at

    assert [r.id for r in store.recent_runs()] == [other, second, first]
    assert [r.id for r in store.recent_runs(S)] == [second, first]
    assert [r.id for r in store.recent_runs(limit=1)] == [other]
    assert store.recent_runs(S)[0].error == "API down"
    assert store.get_run(999_999) is None
    with pytest.raises(KeyError):
        store.finish_run(999_999, "succeeded", {})
