"""The state store: what the engine may rely on, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Column, Connection, Integer, MetaData, Table, text

from connectors.sources.base import Position
from pipelines.engine.state import (
    MIGRATIONS,
    ItemStatus,
    Outcome,
    SchemaTooNewError,
    StateStore,
)
from pipelines.engine.state.store import IN_CHUNK

S, R = "shop-a", "orders"
OpenStore = Callable[..., StateStore]


def outcome(key: str, status: ItemStatus, content_hash: str = "h1", **kwargs: object) -> Outcome:
    return Outcome(key, content_hash, status, **kwargs)  # type: ignore[arg-type]


# -- schema


def test_a_new_database_gets_the_schema_and_reopening_keeps_the_data(
    open_store: OpenStore,
) -> None:
    first = open_store()
    assert first.schema_version() == len(MIGRATIONS)
    first.record(S, R, [outcome("1", ItemStatus.ACCEPTED)])
    first.close()

    again = open_store()
    assert again.schema_version() == len(MIGRATIONS)
    assert again.ledger(S, R, ["1"])["1"].status is ItemStatus.ACCEPTED


def test_an_older_database_is_upgraded_in_order_once(open_store: OpenStore) -> None:
    open_store().record(S, R, [outcome("1", ItemStatus.ACCEPTED)])  # at today's version
    applied: list[str] = []

    def add_notes(conn: Connection) -> None:
        applied.append("notes")
        conn.execute(text("ALTER TABLE shopsync_runs ADD COLUMN notes TEXT"))

    def add_table(conn: Connection) -> None:
        applied.append("table")
        Table("shopsync_extra", MetaData(), Column("id", Integer, primary_key=True)).create(conn)

    newer = [*MIGRATIONS, add_notes, add_table]
    store = open_store(migrations=newer)
    assert applied == ["notes", "table"]
    assert store.schema_version() == len(MIGRATIONS) + 2
    assert store.ledger(S, R, ["1"])["1"].status is ItemStatus.ACCEPTED
    with store._engine.connect() as conn:  # the migrations' changes are there
        conn.execute(text("SELECT notes FROM shopsync_runs"))
        conn.execute(text("SELECT id FROM shopsync_extra"))

    open_store(migrations=newer)
    assert applied == ["notes", "table"], "an up-to-date database runs no migration"


def test_a_version_1_ledger_gains_the_later_columns(open_store: OpenStore) -> None:
    store = open_store(migrations=MIGRATIONS[:1])
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED)])
    with store._engine.begin() as conn:  # then the ledger as version 1 made it
        conn.execute(text("DROP INDEX ix_shopsync_ledger_record"))
        conn.execute(text("ALTER TABLE shopsync_ledger DROP COLUMN resends"))
        conn.execute(text("ALTER TABLE shopsync_ledger DROP COLUMN changed_at"))
    store.close()

    upgraded = open_store()

    assert upgraded.schema_version() == len(MIGRATIONS)
    upgraded.count_resend(S, R, ["1"])
    assert upgraded.ledger(S, R, ["1"])["1"].resends == 1
    assert upgraded.ledger(S, R, ["1"])["1"].changed_at is None


def test_a_failing_migration_leaves_the_database_as_it_was(open_store: OpenStore) -> None:
    open_store()

    def v2_half_done(conn: Connection) -> None:
        conn.execute(text("ALTER TABLE shopsync_runs ADD COLUMN notes TEXT"))
        raise RuntimeError("migration bug")

    with pytest.raises(RuntimeError, match="migration bug"):
        open_store(migrations=[*MIGRATIONS, v2_half_done])
    store = open_store()
    assert store.schema_version() == len(MIGRATIONS)
    with store._engine.connect() as conn, pytest.raises(Exception, match="notes"):
        conn.execute(text("SELECT notes FROM shopsync_runs"))


def test_a_database_from_a_newer_shopsync_is_refused(open_store: OpenStore) -> None:
    open_store(migrations=[*MIGRATIONS, lambda conn: None])
    with pytest.raises(SchemaTooNewError, match=f"version {len(MIGRATIONS) + 1}"):
        open_store()


def test_a_new_database_is_built_whole_and_stamped_with_the_latest_version(
    open_store: OpenStore,
) -> None:
    # MIGRATIONS[0] builds today's tables, which already hold what later steps add
    ran: list[int] = []
    store = open_store(migrations=[MIGRATIONS[0], lambda conn: ran.append(2)])
    assert store.schema_version() == 2
    assert ran == []


def test_stores_opened_at_once_on_a_new_database_all_work(db_url: str) -> None:
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []
    stores: list[StateStore] = []

    def open_one(index: int) -> None:
        try:
            barrier.wait()
            store = StateStore(db_url)
            stores.append(store)
            store.record(S, R, [outcome(str(index), ItemStatus.ACCEPTED)])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert stores[0].counts(S) == {R: {"accepted": 4}}
        assert stores[0].schema_version() == len(MIGRATIONS)
    finally:
        for store in stores:
            store.close()


def test_the_default_database_is_state_db_in_shopsync_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SHOPSYNC_HOME", str(tmp_path / "home"))
    url = StateStore.default_url()
    assert url == f"sqlite:///{tmp_path / 'home' / 'state.db'}"
    with StateStore(url):  # the folder is created
        assert (tmp_path / "home" / "state.db").exists()

    monkeypatch.delenv("SHOPSYNC_HOME")
    assert StateStore.default_url() == f"sqlite:///{Path.home() / '.shopsync' / 'state.db'}"


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    with (
        StateStore(f"sqlite:///{tmp_path / 'state.db'}"),
        closing(sqlite3.connect(tmp_path / "state.db")) as raw,
    ):
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_in_memory_sqlite_store_works_across_threads() -> None:
    with StateStore("sqlite://") as store:
        worker = threading.Thread(
            target=store.record, args=(S, R, [outcome("1", ItemStatus.ACCEPTED)])
        )
        worker.start()
        worker.join()
        assert store.counts() == {R: {"accepted": 1}}


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


# -- the ledger


def test_attempts_count_consecutive_unsuccessful_sends(store: StateStore) -> None:
    def attempts() -> int:
        return store.ledger(S, R, ["1"])["1"].attempts

    store.record(S, R, [outcome("1", ItemStatus.FAILED, errors=["timeout"], payload={"a": 1})])
    assert attempts() == 1
    store.record(S, R, [outcome("1", ItemStatus.REJECTED, errors=["bad"], payload={"a": 1})])
    assert attempts() == 2
    store.record(S, R, [outcome("1", ItemStatus.QUARANTINED, errors=["no email"])])
    assert attempts() == 2, "quarantined is no send"
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED)])
    assert attempts() == 0
    store.record(S, R, [outcome("1", ItemStatus.FAILED, "h2", payload={"a": 2})])
    assert attempts() == 1


def test_an_entry_keeps_errors_and_payload_until_accepted(store: StateStore) -> None:
    payload = {"id": "1", "name": "Zoë ☃", "lines": [{"qty": 2, "price": 9.5}], "x": None}
    store.record(
        S, R, [outcome("1", ItemStatus.REJECTED, "h1", source_record_id="r1",
                       errors=["email: invalid"], payload=payload)]
    )
    rejected = store.ledger(S, R, ["1"])["1"]
    assert (rejected.status, rejected.content_hash) == (ItemStatus.REJECTED, "h1")
    assert rejected.errors == ["email: invalid"]
    assert rejected.payload == payload
    assert rejected.source_record_id == "r1"
    assert rejected.accepted_at is None and rejected.accepted_hash is None

    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h2", payload=payload)])
    accepted = store.ledger(S, R, ["1"])["1"]
    assert (accepted.status, accepted.content_hash) == (ItemStatus.ACCEPTED, "h2")
    assert accepted.payload == payload, "kept until read back, to send again if it never shows"
    assert accepted.errors == []
    assert accepted.accepted_hash == "h2"
    assert accepted.source_record_id == "r1", "a known source record id is kept"
    assert accepted.first_seen_at == rejected.first_seen_at
    assert accepted.updated_at >= rejected.updated_at
    assert accepted.accepted_at is not None
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].payload is None, "a visible item's payload goes"
    for moment in (accepted.first_seen_at, accepted.updated_at, accepted.accepted_at):
        assert moment.tzinfo is UTC
        assert abs(datetime.now(UTC) - moment) < timedelta(minutes=5)


def test_a_failed_resend_keeps_the_accepted_hash_and_a_new_acceptance_awaits_visibility(
    store: StateStore,
) -> None:
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h1")])
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].visible_at is not None

    store.record(S, R, [outcome("1", ItemStatus.FAILED, "h2", payload={"v": 2})])
    failed = store.ledger(S, R, ["1"])["1"]
    assert (failed.content_hash, failed.accepted_hash) == ("h2", "h1")
    assert failed.payload == {"v": 2}

    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h2")])
    again = store.ledger(S, R, ["1"])["1"]
    assert again.accepted_hash == "h2"
    assert again.visible_at is None, "the new content is not confirmed visible yet"


def test_a_key_twice_in_one_batch_is_applied_in_order(store: StateStore) -> None:
    store.record(
        S, R,
        [
            outcome("1", ItemStatus.FAILED, "h1", payload={"v": 1}),
            outcome("2", ItemStatus.ACCEPTED),
            outcome("1", ItemStatus.REJECTED, "h2", errors=["bad"], payload={"v": 2}),
        ],
    )
    entry = store.ledger(S, R, ["1"])["1"]
    assert (entry.status, entry.content_hash, entry.attempts) == (ItemStatus.REJECTED, "h2", 2)


def test_the_ledger_is_kept_per_source_and_resource(store: StateStore) -> None:
    store.record(S, "orders", [outcome("1", ItemStatus.ACCEPTED)])
    store.record(S, "products", [outcome("1", ItemStatus.REJECTED)])
    store.record("shop-b", "orders", [outcome("1", ItemStatus.FAILED)])

    assert store.ledger(S, "orders", ["1"])["1"].status is ItemStatus.ACCEPTED
    assert store.ledger(S, "products", ["1"])["1"].status is ItemStatus.REJECTED
    assert store.ledger("shop-b", "orders", ["1"])["1"].status is ItemStatus.FAILED


def test_a_look_up_of_many_keys_returns_the_known_ones(store: StateStore) -> None:
    known = [f"{i}|en" for i in range(IN_CHUNK * 2 + 100)]
    store.record(S, R, [outcome(key, ItemStatus.ACCEPTED) for key in known])

    asked = [*known, "nope", known[0], "404|fr"]
    found = store.ledger(S, R, asked)
    assert set(found) == set(known)
    assert all(found[key].key == key for key in known)
    assert store.ledger(S, R, []) == {}


def test_counts_are_per_resource_and_status(store: StateStore) -> None:
    store.record(S, "orders", [outcome(str(i), ItemStatus.ACCEPTED) for i in range(3)])
    store.record(S, "orders", [outcome("9", ItemStatus.REJECTED)])
    store.record(S, "products", [outcome("1", ItemStatus.QUARANTINED)])
    store.record("shop-b", "orders", [outcome("1", ItemStatus.FAILED)])

    assert store.counts(S) == {
        "orders": {"accepted": 3, "rejected": 1},
        "products": {"quarantined": 1},
    }
    assert store.counts(S, "products") == {"products": {"quarantined": 1}}
    assert store.counts() == {
        "orders": {"accepted": 3, "rejected": 1, "failed": 1},
        "products": {"quarantined": 1},
    }
    assert store.counts("nobody") == {}


def test_entries_page_through_the_ledger_in_key_order(store: StateStore) -> None:
    statuses = [ItemStatus.ACCEPTED, ItemStatus.FAILED, ItemStatus.REJECTED, ItemStatus.VISIBLE]
    keys = [f"{i:05d}" for i in range(2500)]
    store.record(S, R, [outcome(k, statuses[i % 4]) for i, k in enumerate(keys)])
    store.record(S, "other", [outcome("00001", ItemStatus.FAILED)])

    def all_pages(statuses: Collection[ItemStatus] | None = None) -> tuple[list[str], int]:
        seen: list[str] = []
        pages, after = 0, None
        while page := store.entries(S, R, statuses, limit=300, after_key=after):
            seen.extend(entry.key for entry in page)
            after, pages = page[-1].key, pages + 1
        return seen, pages

    assert all_pages() == (keys, 9)
    failed, _ = all_pages({ItemStatus.FAILED})
    assert failed == keys[1::4]
    unsent, _ = all_pages([ItemStatus.FAILED, ItemStatus.REJECTED])
    assert unsent == sorted(keys[1::4] + keys[2::4])
    assert [e.key for e in store.entries(S, R, after_key="02497")] == ["02498", "02499"]


def test_entries_order_keys_by_bytes_on_every_backend(store: StateStore) -> None:
    keys = ["b", "B", "a|fr", "a|en", "10", "9", "_x", "é"]
    store.record(S, R, [outcome(k, ItemStatus.ACCEPTED) for k in keys])
    assert [e.key for e in store.entries(S, R)] == sorted(keys, key=lambda k: k.encode())


def test_mark_changes_the_status_of_known_keys_only(store: StateStore) -> None:
    store.record(
        S, R,
        [outcome(k, ItemStatus.ACCEPTED) for k in ("1", "2")]
        + [outcome(k, ItemStatus.FAILED, errors=["500"], payload={"k": k}) for k in ("3", "4")],
    )
    assert store.mark(S, R, ["1", "2", "unknown"], ItemStatus.VISIBLE) == 2
    visible = store.ledger(S, R, ["1"])["1"]
    assert visible.status is ItemStatus.VISIBLE
    assert visible.visible_at is not None and visible.visible_at.tzinfo is UTC

    store.mark(S, R, ["3"], ItemStatus.PARKED)
    parked = store.ledger(S, R, ["3"])["3"]
    assert (parked.status, parked.payload, parked.errors) == (
        ItemStatus.PARKED, {"k": "3"}, ["500"]
    )
    assert parked.attempts == 1

    store.mark(S, R, ["4"], ItemStatus.DELETED)
    assert store.ledger(S, R, ["4"])["4"].payload is None
    assert store.counts(S) == {R: {"visible": 2, "parked": 1, "deleted": 1}}

    first_visible = visible.visible_at
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].visible_at == first_visible, "the first read-back counts"


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


# -- scale


def test_twenty_thousand_outcomes_recorded_in_batches_are_each_counted_once(store: StateStore) -> None:
    outcomes = [
        outcome(
            f"c{i}",
            ItemStatus.REJECTED if i % 20 == 0 else ItemStatus.ACCEPTED,
            f"hash{i}",
            source_record_id=str(i),
            errors=["email: invalid"] if i % 20 == 0 else [],
            payload={"id": i, "email": f"c{i}@example"} if i % 20 == 0 else None,
        )
        for i in range(20_000)
    ]
    for first in range(0, len(outcomes), 500):
        store.record(S, "customers", outcomes[first : first + 500])

    assert store.counts(S) == {"customers": {"accepted": 19_000, "rejected": 1_000}}
    rejected = store.entries(S, "customers", statuses=[ItemStatus.REJECTED])
    assert {e.errors[0] for e in rejected} == {"email: invalid"} and len(rejected) == 1_000
