"""``state.many.execute_many`` writes on SQLite exactly what SQLAlchemy's own executemany
writes, and the rows ``record`` builds a chunk at a time are those it built an outcome at a
time: the ledger and its events, compared as the database holds them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection

import pipelines.engine.state.many as many
import pipelines.engine.state.writes as writes
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.state.models import NO_PAYLOAD, SUCCESSFUL, UNSUCCESSFUL
from pipelines.engine.state.schema import events
from tests.engine.state_support import R, S

BASE = datetime(2024, 1, 1, tzinfo=UTC)
#: every store's now here (not in UTC, with microseconds: both are converted when bound)
NOW = datetime(2024, 5, 6, 7, 8, 9, 123_456, tzinfo=timezone(timedelta(hours=2)))


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "utc_now", lambda: NOW)


def outcomes(n: int, status: ItemStatus, version: int) -> list[Outcome]:
    """Keys with and without record ids, payloads (nested, with nulls) and change times."""
    return [Outcome(f"k{k}", f"h{k}.{version}", status, f"r{k}" if k % 3 else None,
                    ["refused"] if status is ItemStatus.REJECTED else [],
                    {"a": k, "lines": [1, None], "none": None} if k % 2 else None,
                    BASE + timedelta(seconds=k) if k % 4 else None)
            for k in range(n)]


def written(path: Path) -> tuple[list[Any], list[Any]]:
    """The ledger and its events as stored (values and their SQLite types)."""
    with sqlite3.connect(path) as conn:
        ledger = conn.execute(
            "SELECT *, typeof(errors), typeof(payload), typeof(changed_at),"
            " typeof(accepted_at), typeof(attempts) FROM shopsync_ledger"
            " ORDER BY item_key").fetchall()
        events = conn.execute(
            "SELECT *, typeof(errors), typeof(detail), typeof(run_id)"
            " FROM shopsync_events ORDER BY id").fetchall()
    return ledger, events


def record_story(path: Path) -> tuple[list[Any], list[Any]]:
    store = StateStore(f"sqlite:///{path}")
    try:
        store.start_run(S, R, "sync")
        store.record(S, R, outcomes(40, ItemStatus.REJECTED, 1))
        store.record(S, R, outcomes(30, ItemStatus.ACCEPTED, 2) + outcomes(10, ItemStatus.FAILED, 3))
        store.record(S, R, outcomes(20, ItemStatus.QUARANTINED, 4))
        store.record(S, R, [Outcome("one", "h", ItemStatus.ACCEPTED, None, [], {"q": 1})])
        # statuses given as text, a key twice in one chunk, errors as a tuple
        store.record(S, R, [
            Outcome("k1", "h1.5", ItemStatus.VISIBLE, "r1", [], {"dropped": True}, BASE),
            Outcome("k2", "h2.5", "deleted", None, (), {"dropped": True}),  # type: ignore[arg-type]
            Outcome("k3", "", "parked", "r3", ("why", "not"), {"kept": [None]}),  # type: ignore[arg-type]
            Outcome("k1", "h1.6", ItemStatus.REJECTED, None, ("no",), {"k": {"n": 1}}, BASE),
            Outcome("k5", "h5.5", ItemStatus.VISIBLE, "r5", [], None, BASE),
        ])
    finally:
        store.close()
    return written(path)


def as_rows(columns: Mapping[str, Sequence[Any]], shared: Mapping[str, Any]) -> list[Any]:
    return [{**shared, **dict(zip(columns, values, strict=True))}
            for values in zip(*columns.values(), strict=True)]


def sqlalchemy_way(conn: Connection, statement: Any, columns: Mapping[str, Sequence[Any]],
                   shared: Mapping[str, Any]) -> None:
    conn.execute(statement, as_rows(columns, shared))


def test_the_ledger_holds_what_sqlalchemy_would_write(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fast = record_story(tmp_path / "fast.db")
    monkeypatch.setattr(writes, "execute_many", sqlalchemy_way)
    assert fast == record_story(tmp_path / "sqlalchemy.db")
    assert len(fast[0]) == 41 and len(fast[1]) == 106


def ledger_row(source: str, resource: str, outcome: Outcome, now: datetime) -> dict[str, Any]:
    """The row a new key got when rows were built an outcome at a time."""
    status = ItemStatus(outcome.status)
    successful = status in SUCCESSFUL
    return {
        "source": source, "resource": resource, "item_key": outcome.key,
        "content_hash": outcome.content_hash, "status": status.value,
        "attempts": 1 if status in UNSUCCESSFUL else 0,
        "source_record_id": outcome.source_record_id,
        "errors": list(outcome.errors), "payload": None if status in NO_PAYLOAD else outcome.payload,
        "first_seen_at": now, "updated_at": now, "accepted_at": now if successful else None,
        "visible_at": now if status is ItemStatus.VISIBLE else None,
        "accepted_hash": outcome.content_hash if successful else None,
        "changed_at": outcome.changed_at, "unseen_at": None,
    }


def outcome_event(source: str, resource: str, outcome: Outcome, now: datetime,
                  run_id: int | None) -> dict[str, Any]:
    """The event an outcome added when rows were built an outcome at a time."""
    changed = outcome.changed_at.isoformat() if outcome.changed_at is not None else None
    return {
        "source": source, "resource": resource, "item_key": outcome.key, "at": now,
        "run_id": run_id, "kind": ItemStatus(outcome.status).value,
        "content_hash": outcome.content_hash or None, "errors": list(outcome.errors) or None,
        "detail": {"record": outcome.source_record_id, "changed_at": changed},
    }


def one_at_a_time(build: Any) -> Any:
    """A builder of a chunk's columns made of ``build``'s rows, one outcome at a time."""
    def columns(source: str, resource: str, outcomes: Sequence[Outcome],
                *rest: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        rows = [build(source, resource, outcome, *rest) for outcome in outcomes]
        return {name: [row[name] for row in rows] for name in rows[0]}, {}
    return columns


def test_a_chunk_holds_what_rows_built_an_outcome_at_a_time_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Columns built a chunk at a time, with the values rows share, store what rows built
    an outcome at a time and written by SQLAlchemy stored: times included."""
    fast = record_story(tmp_path / "fast.db")
    monkeypatch.setattr(writes, "ledger_columns", one_at_a_time(ledger_row))
    monkeypatch.setattr(writes, "event_columns", one_at_a_time(outcome_event))
    monkeypatch.setattr(writes, "execute_many", sqlalchemy_way)
    assert fast == record_story(tmp_path / "rows.db")


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
                write(conn, statement, {name: [row[name] for row in rows] for name in rows[0]},
                      {})
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT item_key, at, run_id, kind, content_hash, errors, detail,"
                            " typeof(errors), typeof(detail) FROM shopsync_events"
                            " ORDER BY id").fetchall()


def test_one_statement_with_other_columns_and_shared_values_is_written_alike(
        tmp_path: Path) -> None:
    fast = insert_events(tmp_path / "fast.db", many.execute_many)
    assert fast == insert_events(tmp_path / "sqlalchemy.db", sqlalchemy_way)
    assert len(fast) == 38
