"""``state.many.execute_many`` writes on SQLite exactly what SQLAlchemy's own executemany
writes: the ledger and its events, compared as the database holds them."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection

import pipelines.engine.state.many as many
import pipelines.engine.state.writes as writes
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.state.schema import events
from tests.engine.state_support import R, S

BASE = datetime(2024, 1, 1, tzinfo=UTC)


def outcomes(n: int, status: ItemStatus, version: int) -> list[Outcome]:
    """Keys with and without record ids, payloads (nested, with nulls) and change times."""
    return [Outcome(f"k{k}", f"h{k}.{version}", status, f"r{k}" if k % 3 else None,
                    ["refused"] if status is ItemStatus.REJECTED else [],
                    {"a": k, "lines": [1, None], "none": None} if k % 2 else None,
                    BASE + timedelta(seconds=k) if k % 4 else None)
            for k in range(n)]


def written(path: Path) -> tuple[list[Any], list[Any]]:
    """The ledger and its events as stored (values and their SQLite types), times aside
    (each store records its own now)."""
    with sqlite3.connect(path) as conn:
        ledger = conn.execute(
            "SELECT item_key, content_hash, status, attempts, source_record_id, errors,"
            " payload, accepted_hash, changed_at, visible_at, unseen_at, typeof(errors),"
            " typeof(payload), typeof(changed_at), typeof(accepted_at), length(updated_at)"
            " FROM shopsync_ledger ORDER BY item_key").fetchall()
        events = conn.execute(
            "SELECT item_key, kind, content_hash, errors, detail, run_id, typeof(errors),"
            " typeof(detail), length(at) FROM shopsync_events ORDER BY id").fetchall()
    return ledger, events


def record_story(path: Path) -> tuple[list[Any], list[Any]]:
    store = StateStore(f"sqlite:///{path}")
    try:
        store.start_run(S, R, "sync")
        store.record(S, R, outcomes(40, ItemStatus.REJECTED, 1))
        store.record(S, R, outcomes(30, ItemStatus.ACCEPTED, 2) + outcomes(10, ItemStatus.FAILED, 3))
        store.record(S, R, outcomes(20, ItemStatus.QUARANTINED, 4))
        store.record(S, R, [Outcome("one", "h", ItemStatus.ACCEPTED, None, [], {"q": 1})])
    finally:
        store.close()
    return written(path)


def test_the_ledger_holds_what_sqlalchemy_would_write(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fast = record_story(tmp_path / "fast.db")

    def sqlalchemy_way(conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        conn.execute(statement, list(rows))

    monkeypatch.setattr(writes, "execute_many", sqlalchemy_way)
    assert fast == record_story(tmp_path / "sqlalchemy.db")
    assert len(fast[0]) == 41 and len(fast[1]) == 101


def test_rows_split_over_many_statements_are_written_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many rows one statement takes (here a few, so every chunk is split), the
    ledger and its events hold the same as written in the fewest statements."""
    fewest = record_story(tmp_path / "fewest.db")
    monkeypatch.setattr(many, "VARIABLES", 40)
    assert record_story(tmp_path / "split.db") == fewest


def insert_events(path: Path, write: Any) -> list[Any]:
    """Events inserted by one statement object with rows of two column sets in turn, and
    objects that rows far apart share; as stored."""
    store = StateStore(f"sqlite:///{path}")
    statement = events.insert()
    shared_detail, shared_errors = {"record": "r1", "n": [1, None]}, ["refused"]
    full = [{"source": S, "resource": R, "item_key": f"k{k}", "at": BASE + timedelta(k % 3),
             "run_id": k % 2 or None, "kind": "accepted", "content_hash": None,
             "errors": shared_errors if k % 3 else None,
             "detail": shared_detail if k % 4 else {"k": k}} for k in range(30)]
    fewer = [{"source": S, "resource": R, "item_key": f"j{k}", "at": BASE, "kind": "failed"}
             for k in range(5)]
    try:
        with store._engine.begin() as conn:
            for rows in (full, fewer, full[:3]):
                write(conn, statement, rows)
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT item_key, at, run_id, kind, content_hash, errors, detail,"
                            " typeof(errors), typeof(detail) FROM shopsync_events"
                            " ORDER BY id").fetchall()


def test_one_statement_with_other_columns_and_shared_values_is_written_alike(
        tmp_path: Path) -> None:
    fast = insert_events(tmp_path / "fast.db", many.execute_many)
    assert fast == insert_events(tmp_path / "sqlalchemy.db",
                                 lambda conn, statement, rows: conn.execute(statement, rows))
    assert len(fast) == 38
