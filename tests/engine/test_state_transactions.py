"""The state store's transactions: outcomes and cursors stored together or not at all,
and stores on one database, in threads, that see each other's writes and lose none, on
SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from connectors.sources.base import Position
from pipelines.engine.state import ItemStatus, StateStore
from tests.engine.state_support import OpenStore, R, S, outcome

# -- transactions


def test_outcomes_and_their_cursor_are_stored_together(store: StateStore) -> None:
    at = Position(datetime(2024, 5, 1, 12, tzinfo=UTC), "77")
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED)], cursor=("orders", at))
    assert store.get_cursor(S, "orders") == at
    assert store.ledger(S, R, ["1"])["1"].status is ItemStatus.ACCEPTED

    later = Position(datetime(2024, 5, 2, tzinfo=UTC), "78")
    store.record(S, R, [], cursor=("orders", later))
    assert store.get_cursor(S, "orders") == later


def test_when_recording_fails_neither_outcomes_nor_cursor_are_stored(store: StateStore) -> None:
    before = Position(datetime(2024, 5, 1, tzinfo=UTC), "1")
    store.set_cursor(S, "orders", before)
    store.record(S, R, [outcome("1", ItemStatus.FAILED, payload={"v": 1})])
    batch = [
        outcome("1", ItemStatus.ACCEPTED, "h2"),
        outcome("2", ItemStatus.ACCEPTED),
        outcome("3", ItemStatus.REJECTED, payload={"not json": object()}),
    ]
    with pytest.raises(Exception, match="JSON|serializ"):
        store.record(S, R, batch, cursor=("orders", Position(datetime(2024, 6, 1, tzinfo=UTC))))

    assert store.get_cursor(S, "orders") == before
    assert store.ledger(S, R, ["1", "2", "3"]).keys() == {"1"}
    assert store.ledger(S, R, ["1"])["1"].status is ItemStatus.FAILED


def test_a_transaction_makes_several_calls_all_or_nothing(store: StateStore) -> None:
    with store.transaction():
        store.record(S, R, [outcome("1", ItemStatus.ACCEPTED)])
        with store.transaction():  # nested blocks join the outer one
            store.set_cursor(S, "orders", Position(datetime(2024, 1, 1, tzinfo=UTC)))
        assert store.ledger(S, R, ["1"]).keys() == {"1"}, "reads see the block's writes"
    assert store.get_cursor(S, "orders") is not None

    with pytest.raises(RuntimeError), store.transaction():
        store.record(S, R, [outcome("2", ItemStatus.ACCEPTED)])
        store.set_cursor(S, "orders", Position(datetime(2025, 1, 1, tzinfo=UTC)))
        raise RuntimeError("push crashed")
    assert store.ledger(S, R, ["2"]) == {}
    assert store.get_cursor(S, "orders") == Position(datetime(2024, 1, 1, tzinfo=UTC))


def test_two_stores_on_one_database_see_each_others_writes(open_store: OpenStore) -> None:
    a, b = open_store(), open_store()
    a.record(S, R, [outcome("1", ItemStatus.FAILED)])
    b.record(S, R, [outcome("1", ItemStatus.FAILED), outcome("2", ItemStatus.ACCEPTED)])
    a.set_cursor(S, "orders", Position(datetime(2024, 1, 1, tzinfo=UTC), "5"))

    assert a.ledger(S, R, ["1"])["1"].attempts == 2
    assert b.counts(S) == a.counts(S) == {R: {"failed": 1, "accepted": 1}}
    assert b.get_cursor(S, "orders") == Position(datetime(2024, 1, 1, tzinfo=UTC), "5")


def test_writers_in_two_threads_do_not_lose_updates(open_store: OpenStore) -> None:
    stores = [open_store(), open_store()]

    def fail_many(store: StateStore) -> None:
        for _ in range(25):
            store.record(S, R, [outcome("1", ItemStatus.FAILED)])

    threads = [threading.Thread(target=fail_many, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stores[0].ledger(S, R, ["1"])["1"].attempts == 50


def test_a_call_may_run_in_another_thread_unless_the_calls_share_one_connection(
        store: StateStore) -> None:
    assert store.parallel_safe  # a database file, or PostgreSQL: a connection per call
    with store.transaction():
        assert not store.parallel_safe  # the transaction's one connection
    with StateStore("sqlite://") as in_memory:
        assert not in_memory.parallel_safe  # the in-memory database's one connection


def test_one_store_records_in_a_thread_while_another_thread_reads(store: StateStore) -> None:
    """What a sync does: a chunk's outcomes are recorded in a worker thread while the event
    loop reads the next chunk's states. A read sees each item as recorded or not yet (on
    PostgreSQL a read of many keys may see a chunk in part: each ``IN`` list is a statement
    of its own; the sync takes what the delivery in flight records from the delivery)."""
    chunks = [[outcome(f"{n}-{i}", ItemStatus.ACCEPTED) for i in range(200)] for n in range(20)]
    keys = [o.key for chunk in chunks for o in chunk]

    def record_all() -> None:
        for chunk in chunks:
            store.record(S, R, chunk)

    writer = threading.Thread(target=record_all)
    writer.start()
    reads = 0
    while writer.is_alive() or reads == 0:
        found = store.states(S, R, keys)
        assert set(found.values()) <= {("h1", ItemStatus.ACCEPTED)}
        reads += 1
    writer.join()
    assert len(store.states(S, R, keys)) == 4000
