"""How the store talks to its two backends: engine set-up, upserts, and rows to values."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Insert,
    Row,
    case,
    create_engine,
    event,
    func,
    null,
    or_,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from connectors.http.retry import RetryPolicy, retrying
from connectors.sources.base import Position
from pipelines.engine.state.models import (
    NO_PAYLOAD,
    SUCCESSFUL,
    UNSUCCESSFUL,
    ItemEvent,
    ItemStatus,
    LedgerEntry,
    Outcome,
    RunRecord,
)
from pipelines.engine.state.schema import cursors, ledger, readbacks

#: seconds a SQLite connection waits for another one's write lock before giving up
SQLITE_TIMEOUT = 60.0
#: an execution option naming the BEGIN mode on SQLite ("IMMEDIATE" for writers)
SQLITE_BEGIN = "shopsync_sqlite_begin"


def create_private(database: Path) -> None:
    """The SQLite file, and the folders made for it, readable by their owner only (0600,
    0700): the ledger holds customers' data. An existing file or folder is left as it is;
    SQLite gives its journal files the database file's mode."""
    missing = [path for path in (database.parent, *database.parent.parents)
               if not path.exists()]
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
    try:
        os.close(os.open(database, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


def open_engine(url: str) -> Engine:
    """An engine for ``url``: on SQLite, the file and its folder are created readable by
    their owner only (``create_private``) and the connections are set up by
    ``_configure_sqlite``."""
    parsed = make_url(url)
    options: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": orjson.loads}
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, pool_pre_ping=True, **options)
    database = parsed.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        create_private(Path(database).expanduser().absolute())
        options["connect_args"] = {"timeout": SQLITE_TIMEOUT}
    else:  # one shared in-memory database, not one per pooled connection
        options |= {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    engine = create_engine(parsed, **options)
    _configure_sqlite(engine)
    return engine


def cursor_upsert(
    dialect: str, source: str, stream: str, position: Position, now: datetime
) -> Insert:
    """Set one stream's cursor, whether it had one or not."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(cursors).values(
        source=source,
        stream=stream,
        changed_at=position.changed_at,
        record_id=position.record_id,
        updated_at=now,
    )
    return stmt.on_conflict_do_update(
        index_elements=[cursors.c.source, cursors.c.stream],
        set_={
            "changed_at": stmt.excluded.changed_at,
            "record_id": stmt.excluded.record_id,
            "updated_at": stmt.excluded.updated_at,
        },
    )


def readback_upsert(dialect: str) -> Insert:
    """Set what items read back as, and when; run with executemany."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(readbacks)
    return stmt.on_conflict_do_update(
        index_elements=[readbacks.c.source, readbacks.c.resource, readbacks.c.item_key],
        set_={"readback_hash": stmt.excluded.readback_hash,
              "checked_at": stmt.excluded.checked_at},
    )


def dumps(value: Any) -> str:
    # like json.dumps (non-string keys become strings), but faster; raises TypeError on
    # values JSON cannot hold, which rolls the whole transaction back. Keys that are all
    # str need no option: the same text, a third less time (a payload each outcome)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


#: KiB of page cache per connection (SQLite's default: 2 000). A sync's chunk adds its keys
#: all over the ledger's and the events' key indexes (a source lists by change time, not by
#: key): at a million entries the pages those inserts touch no longer fit in 2 MiB, and each
#: chunk read them again from the file. Measured (``bench/ledger.py --shape shop``), with
#: ``WAL_CHECKPOINT_PAGES``: the recording thread's CPU from 31 to 25 µs an outcome; 64 MiB
#: saved no more. A cache holds only pages read, and is emptied when another connection
#: writes.
CACHE_KIB = 32 * 1024
#: WAL pages that start a checkpoint when a commit ends (SQLite's default: 1 000, 4 MiB). A
#: chunk of 2 000 outcomes dirties some 3 500 pages, so the default copied every chunk's
#: pages back into the database file, and the same index pages again for the next chunk; a
#: checkpoint every few chunks copies each page once (the WAL file keeps ~40 MiB on disk).
WAL_CHECKPOINT_PAGES = 10_000


def _configure_sqlite(engine: Engine) -> None:
    """WAL, NORMAL sync, a larger page cache and rarer checkpoints (``CACHE_KIB``,
    ``WAL_CHECKPOINT_PAGES``), and real transactions: sqlite3's own BEGIN handling skips
    SELECTs and DDL, so SQLAlchemy emits BEGIN itself (the recipe in SQLAlchemy's SQLite
    docs). Writers use BEGIN IMMEDIATE: they take the write lock first and wait for it (busy
    timeout) instead of failing when a read would need upgrading to a write."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        _use_wal(dbapi_connection)
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")
        dbapi_connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(f"BEGIN {conn.get_execution_options().get(SQLITE_BEGIN, '')}")


#: switching a file to WAL while other connections open it (``_use_wal``): every few
#: milliseconds at first, a quarter second at most, for as long as a busy lock is waited for
WAL_SWITCH = RetryPolicy(max_attempts=100_000, initial_backoff=0.005, max_backoff=0.25,
                         jitter=0.0, max_total=SQLITE_TIMEOUT)


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _use_wal(dbapi_connection: sqlite3.Connection) -> None:
    """Switch the file to WAL (a lasting setting of the file) unless it already is.

    The switch needs the file to itself and, unlike other statements, does not wait for a
    busy lock: when several processes open a new database at once, all but one would fail.
    So the switch is retried, under the project's one retry policy object (not HTTP: a
    SQLite "database is locked", the only error retried), until one of them has made it.
    """
    for attempt in retrying(WAL_SWITCH, _locked):
        with attempt:
            mode = dbapi_connection.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() not in ("wal", "memory"):  # an in-memory database has no WAL
                dbapi_connection.execute("PRAGMA journal_mode=WAL")


def _one_of(column: ColumnElement[Any], statuses: Collection[ItemStatus]) -> ColumnElement[bool]:
    # not IN (…): executemany cannot take SQLAlchemy's expanding IN parameters
    return or_(*(column == status.value for status in sorted(statuses)))


def ledger_upsert(dialect: str) -> Insert:
    """INSERT … ON CONFLICT DO UPDATE for one outcome; run with executemany.

    The row inserted for a new key already holds the right values; for a known key the
    columns below combine the outcome (``excluded``) with what the ledger had.
    """
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(ledger)
    new, old = stmt.excluded, ledger.c
    unsuccessful, successful = _one_of(new.status, UNSUCCESSFUL), _one_of(new.status, SUCCESSFUL)
    return stmt.on_conflict_do_update(
        index_elements=[old.source, old.resource, old.item_key],
        set_={
            "content_hash": new.content_hash,
            "status": new.status,
            "attempts": case(
                (unsuccessful, old.attempts + 1),
                (successful, 0),
                else_=old.attempts,
            ),
            "source_record_id": func.coalesce(new.source_record_id, old.source_record_id),
            "errors": new.errors,
            "payload": new.payload,
            "updated_at": new.updated_at,
            "accepted_at": case(
                (new.status == ItemStatus.ACCEPTED.value, new.accepted_at),
                else_=func.coalesce(old.accepted_at, new.accepted_at),
            ),
            "visible_at": case(
                (new.status == ItemStatus.ACCEPTED.value, null()),
                (
                    new.status == ItemStatus.VISIBLE.value,
                    func.coalesce(old.visible_at, new.visible_at),
                ),
                else_=old.visible_at,
            ),
            "accepted_hash": case((successful, new.accepted_hash), else_=old.accepted_hash),
            "changed_at": func.coalesce(new.changed_at, old.changed_at),
            "unseen_at": case((new.status == ItemStatus.ACCEPTED.value, null()),
                              else_=old.unseen_at),
        },
    )


#: the errors of an outcome without any (never changed: rows share it)
_NO_ERRORS: list[str] = []
#: each status's text, by its member or its text: looked up, not ``ItemStatus(…).value``
#: (measured: 0.03 instead of 0.29 µs, twice an outcome)
_STATUS_TEXT = {status: status.value for status in ItemStatus}

#: a chunk's rows as ``execute_many`` takes them: a list of values a column, and the values
#: every row shares
Columns = tuple[dict[str, list[Any]], dict[str, Any]]


def _status_texts(outcomes: Sequence[Outcome]) -> list[str]:
    """Each outcome's status, as stored (one that is not an ``ItemStatus`` raises)."""
    text = _STATUS_TEXT.get
    return [text(o.status) or ItemStatus(o.status).value for o in outcomes]


def ledger_columns(source: str, resource: str, outcomes: Sequence[Outcome],
                   now: datetime) -> Columns:
    """The rows new keys get; see ``ledger_upsert`` for known ones."""
    texts = _status_texts(outcomes)
    hashes = [o.content_hash for o in outcomes]
    successful = [text in SUCCESSFUL for text in texts]
    visible = ItemStatus.VISIBLE.value
    return {
        "item_key": [o.key for o in outcomes],
        "content_hash": hashes,
        "status": texts,
        "attempts": [1 if text in UNSUCCESSFUL else 0 for text in texts],
        "source_record_id": [o.source_record_id for o in outcomes],
        # one shared empty list: a chunk's bind step encodes it once (``execute_many``)
        "errors": [list(o.errors) if o.errors else _NO_ERRORS for o in outcomes],
        "payload": [None if text in NO_PAYLOAD else o.payload
                    for text, o in zip(texts, outcomes, strict=True)],
        "accepted_at": [now if ok else None for ok in successful],
        "visible_at": [now if text == visible else None for text in texts],
        "accepted_hash": [hash_ if ok else None
                          for hash_, ok in zip(hashes, successful, strict=True)],
        "changed_at": [o.changed_at for o in outcomes],
    }, {"source": source, "resource": resource, "first_seen_at": now, "updated_at": now,
        "unseen_at": None}


def event_columns(source: str, resource: str, outcomes: Sequence[Outcome], now: datetime,
                  run_id: int | None) -> Columns:
    """The events outcomes add to their items' stories: what became of each, and which
    source record (changed when) it was made from — the read and the mapping behind the
    send."""
    return {
        "item_key": [o.key for o in outcomes],
        "kind": _status_texts(outcomes),
        "content_hash": [o.content_hash or None for o in outcomes],
        "errors": [list(o.errors) or None for o in outcomes],
        "detail": [{"record": o.source_record_id,
                    "changed_at": None if o.changed_at is None else o.changed_at.isoformat()}
                   for o in outcomes],
    }, {"source": source, "resource": resource, "at": now, "run_id": run_id}


def event_from_row(row: Row[Any]) -> ItemEvent:
    return ItemEvent(
        at=row.at,
        kind=row.kind,
        run_id=row.run_id,
        run_kind=row.run_kind,
        content_hash=row.content_hash,
        errors=list(row.errors or ()),
        detail=dict(row.detail or {}),
    )


def entry_from_row(row: Row[Any]) -> LedgerEntry:
    return LedgerEntry(
        key=row.item_key,
        content_hash=row.content_hash,
        status=ItemStatus(row.status),
        attempts=row.attempts,
        source_record_id=row.source_record_id,
        errors=list(row.errors or ()),
        payload=row.payload,
        first_seen_at=row.first_seen_at,
        updated_at=row.updated_at,
        accepted_at=row.accepted_at,
        visible_at=row.visible_at,
        accepted_hash=row.accepted_hash,
        resends=row.resends,
        changed_at=row.changed_at,
        unseen_at=row.unseen_at,
    )


def run_from_row(row: Row[Any]) -> RunRecord:
    return RunRecord(
        id=row.id,
        source=row.source,
        resource=row.resource,
        kind=row.kind,
        status=row.status,
        started_at=row.started_at,
        finished_at=row.finished_at,
        window_start=row.window_start,
        window_end=row.window_end,
        counts=dict(row.counts or {}),
        error=row.error,
    )
