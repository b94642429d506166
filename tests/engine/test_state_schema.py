"""The state store's schema: created, upgraded in order, refused when newer, and where
and how the database is opened, on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import Column, Connection, Integer, MetaData, Table, text

from pipelines.engine.state import MIGRATIONS, ItemStatus, SchemaTooNewError, StateStore
from pipelines.engine.state.sql import CACHE_KIB, WAL_CHECKPOINT_PAGES
from tests.engine.state_support import OpenStore, R, S, outcome

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


def test_sqlite_connections_get_a_larger_cache_and_rarer_checkpoints(tmp_path: Path) -> None:
    with StateStore(f"sqlite:///{tmp_path / 'state.db'}") as store, store.transaction():
        conn = store._current.get()
        assert conn is not None
        assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -CACHE_KIB
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == WAL_CHECKPOINT_PAGES


def test_an_in_memory_sqlite_store_works_across_threads() -> None:
    with StateStore("sqlite://") as store:
        worker = threading.Thread(
            target=store.record, args=(S, R, [outcome("1", ItemStatus.ACCEPTED)])
        )
        worker.start()
        worker.join()
        assert store.counts() == {R: {"accepted": 1}}
