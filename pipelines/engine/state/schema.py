"""The state store's tables, and the migrations that create and upgrade them.

The same tables serve SQLite and PostgreSQL. Every table name starts with ``shopsync_`` so
the store can share a PostgreSQL database with other tools (Dagster has its own ``runs``).

Versioning: ``shopsync_schema`` holds one row with the schema version, the number of
migrations applied. ``MIGRATIONS[0]`` builds the current ``metadata`` from nothing, so a new
database gets it and is stamped with the latest version straight away; ``MIGRATIONS[n]``
(n ≥ 1) brings a database at version n up to version n + 1, and only ever runs on databases
made before it existed. To change the schema: edit ``metadata`` *and* append a migration that
makes the same change to an existing database.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    Connection,
    DateTime,
    Dialect,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator, TypeEngine


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend.

    PostgreSQL stores ``timestamptz`` and returns it in the session's time zone; SQLite has
    no time zones, so it stores naive UTC. Naive input is taken as UTC (as ``Position``
    does); every value read back is aware and in UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        """SQLAlchemy's, but on SQLite a ``datetime`` becomes its text in one step
        (``_sqlite_text``): half the cost, paid once per outcome for its change time."""
        process = super().bind_processor(dialect)
        if (dialect.name != "sqlite" or process is None
                or getattr(self.impl_instance, "_storage_format", None) != SQLITE_TEXT):
            return process
        return partial(_sqlite_text, process)


#: how SQLAlchemy's SQLite ``DATETIME`` writes a datetime by default: what
#: ``datetime.isoformat(" ", "microseconds")`` writes of a naive one
SQLITE_TEXT = ("%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d"
               ".%(microsecond)06d")


def _sqlite_text(process: Callable[[Any], Any], value: Any) -> Any:
    """The text ``process`` (``UTCDateTime``'s then ``DATETIME``'s) makes of ``value``."""
    if type(value) is not datetime:  # None, a date, a subclass: SQLAlchemy's way
        return process(value)
    if value.tzinfo is None:
        return value.isoformat(" ", "microseconds")
    # in UTC, its text without the "+00:00" (cheaper than a naive copy's)
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


def _json() -> TypeEngine[Any]:
    # none_as_null: Python None is SQL NULL, not the JSON text 'null'
    return JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def _key() -> TypeEngine[str]:
    # byte order on both backends (SQLite compares UTF-8 bytes), so keyset pages agree and
    # don't depend on the database's locale
    return Text().with_variant(Text(collation="C"), "postgresql")


metadata = MetaData()

schema_version = Table(
    "shopsync_schema",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
    Column("upgraded_at", UTCDateTime, nullable=False),
    CheckConstraint("id = 1", name="shopsync_schema_one_row"),
)

runs = Table(
    "shopsync_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", Text, nullable=False),
    Column("resource", Text),
    Column("kind", String(32), nullable=False),
    Column("status", String(32), nullable=False),
    Column("window_start", UTCDateTime),
    Column("window_end", UTCDateTime),
    Column("started_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime),
    Column("counts", _json()),
    Column("error", Text),
    Index("ix_shopsync_runs_source", "source", "id"),
)

cursors = Table(
    "shopsync_cursors",
    metadata,
    Column("source", Text, primary_key=True),
    Column("stream", Text, primary_key=True),
    Column("changed_at", UTCDateTime, nullable=False),
    Column("record_id", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

ledger = Table(
    "shopsync_ledger",
    metadata,
    Column("source", Text, primary_key=True),
    Column("resource", Text, primary_key=True),
    Column("item_key", _key(), primary_key=True),
    Column("content_hash", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("source_record_id", Text),
    Column("errors", _json(), nullable=False),
    Column("payload", _json()),
    Column("first_seen_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("accepted_at", UTCDateTime),
    Column("visible_at", UTCDateTime),
    Column("accepted_hash", Text),
    Column("resends", Integer, nullable=False, server_default="0"),
    Column("changed_at", UTCDateTime),
    # the last read-back after the latest acceptance that did not show it: with
    # ``visible_at`` (first seen) it bounds the visibility lag; cleared by a new acceptance
    Column("unseen_at", UTCDateTime),
    # counts per status, and keyset pages of one status (re-sending failed items)
    Index("ix_shopsync_ledger_status", "source", "resource", "status", "item_key"),
    # the items a source record became (deletions at the source)
    Index("ix_shopsync_ledger_record", "source", "resource", "source_record_id"),
)

readbacks = Table(
    "shopsync_readbacks",
    metadata,
    Column("source", Text, primary_key=True),
    Column("resource", Text, primary_key=True),
    Column("item_key", _key(), primary_key=True),
    # what the listing showed of the item when it was last confirmed: an audit compares the
    # destination with it (the ledger drops a visible item's payload)
    Column("readback_hash", Text, nullable=False),
    Column("checked_at", UTCDateTime, nullable=False),
    # an audit's sample: the items checked longest ago first
    Index("ix_shopsync_readbacks_checked", "source", "resource", "checked_at"),
)

events = Table(
    "shopsync_events",
    metadata,
    # append-only: one row per item per thing that happened to it, written in the same
    # transaction as the ledger change it tells (see ``StateStore.events``)
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", Text, nullable=False),
    Column("resource", Text, nullable=False),
    Column("item_key", _key(), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("run_id", Integer),  # the run of ``shopsync_runs`` it happened in, when known
    Column("kind", String(16), nullable=False),
    Column("content_hash", Text),
    Column("errors", _json()),
    Column("detail", _json()),
    # one item's story, in the order it was written
    Index("ix_shopsync_events_item", "source", "resource", "item_key", "id"),
    # the events past their keeping (``StateStore.prune_events``)
    Index("ix_shopsync_events_at", "source", "at"),
)

request_budgets = Table(
    "shopsync_request_budgets",
    metadata,
    # one row per budget (a shop's address, a destination's address and key variable): the
    # start of the first slot not yet given out, in epoch seconds on the database's clock;
    # every process reserves its requests' slots here (``state/budgets.py``)
    Column("budget", Text, primary_key=True),
    Column("next_at", Float(precision=53), nullable=False),
)

Migration = Callable[[Connection], None]


def _create_current(conn: Connection) -> None:
    """Version 1: every table, as ``metadata`` defines it today."""
    metadata.create_all(conn, checkfirst=True)


def _resends(conn: Connection) -> None:
    """Version 2: how often reconciliation re-sent an item, and look-ups by source record."""
    conn.execute(text("ALTER TABLE shopsync_ledger ADD COLUMN resends INTEGER NOT NULL DEFAULT 0"))
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_shopsync_ledger_record"
                      " ON shopsync_ledger (source, resource, source_record_id)"))


def _changed_at(conn: Connection) -> None:
    """Version 3: when each item's source record changed, for completeness by time window."""
    kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
    conn.execute(text(f"ALTER TABLE shopsync_ledger ADD COLUMN changed_at {kind}"))


def _readbacks(conn: Connection) -> None:
    """Version 4: what each visible item read back as, for audits of the destination."""
    readbacks.create(conn, checkfirst=True)


def _events(conn: Connection) -> None:
    """Version 5: each item's story (an append-only table of events), and the ledger's last
    read-back that did not show an item, which bounds its visibility lag."""
    # a database whose version 1 was built by a later shopsync has the column already
    columns = {column["name"] for column in inspect(conn).get_columns(ledger.name)}
    if "unseen_at" not in columns:
        kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
        conn.execute(text(f"ALTER TABLE shopsync_ledger ADD COLUMN unseen_at {kind}"))
    events.create(conn, checkfirst=True)


def _events_by_time(conn: Connection) -> None:
    """Version 6: events found by time, so that reconciliation deletes those past their
    keeping without reading the whole table."""
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_shopsync_events_at"
                      " ON shopsync_events (source, at)"))


def _request_budgets(conn: Connection) -> None:
    """Version 7: request budgets shared by every process (a shop's, a destination key's)."""
    request_budgets.create(conn, checkfirst=True)


MIGRATIONS: list[Migration] = [_create_current, _resends, _changed_at, _readbacks, _events,
                               _events_by_time, _request_budgets]

# one lock for every schema upgrade in a PostgreSQL database: two processes opening the
# store at once queue up instead of racing to create the same tables
_PG_LOCK_KEY = zlib.crc32(b"shopsync_schema")


class SchemaTooNewError(RuntimeError):
    """The database was upgraded by a newer shopsync than this one."""


def current_version(conn: Connection) -> int:
    """The schema version of the database; 0 when it has no state store yet."""
    if not conn.dialect.has_table(conn, schema_version.name):
        return 0
    return conn.execute(select(schema_version.c.version)).scalar() or 0


def migrate(conn: Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database to ``len(migrations)``, inside the caller's transaction.

    The caller holds the write lock on SQLite (``BEGIN IMMEDIATE``); on PostgreSQL an
    advisory lock taken here serializes concurrent upgrades. Returns the version.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
    latest = len(migrations)
    version = current_version(conn)
    if version > latest:
        raise SchemaTooNewError(
            f"the state database is at schema version {version}, but this shopsync knows "
            f"only up to {latest}: upgrade shopsync"
        )
    if version == latest:
        return version
    if version == 0:
        migrations[0](conn)  # builds today's schema whole: later steps are already in it
    else:
        for step in migrations[version:]:
            step(conn)
    schema_version.create(conn, checkfirst=True)
    now = datetime.now(UTC)
    if version == 0:
        conn.execute(schema_version.insert().values(id=1, version=latest, upgraded_at=now))
    else:
        conn.execute(schema_version.update().values(version=latest, upgraded_at=now))
    return latest
