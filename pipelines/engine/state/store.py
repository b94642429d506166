"""The state store: runs, stream cursors, the item ledger and each item's events, in SQLite
or PostgreSQL.

One ``StateStore`` per process is enough; it is safe to use from several threads, and
several processes may open the same database. Every write method is one transaction,
durable when it returns; ``transaction()`` groups several into one.

On SQLite the database runs in WAL mode with ``synchronous=NORMAL``: a committed write
survives a crash of the process, but a power loss may take the last few commits back. The
engine writes outcomes and the cursor that follows them in one transaction
(``record(..., cursor=…)``), so such a loss only rewinds both together, and the items are
sent again — harmless, as writes to the API are idempotent.

Every change to an item also appends an event to its story (``events``), in the same
transaction: what the outcome was, or what it was marked, and in which run. The run is the
innermost one begun in the caller's context (``start_run`` … ``finish_run``, per thread or
asyncio task), so the engine names it once, when it starts the run.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Connection, Integer, String, bindparam, func, literal, select, text
from sqlalchemy.engine import make_url

from connectors.sources.base import Position
from pipelines.engine.state.models import (
    NO_PAYLOAD,
    SUCCESSFUL,
    EventKind,
    ItemEvent,
    ItemStatus,
    LedgerEntry,
    Outcome,
    RunRecord,
)
from pipelines.engine.state.schema import (
    MIGRATIONS,
    Migration,
    UTCDateTime,
    cursors,
    events,
    ledger,
    migrate,
    readbacks,
    runs,
)
from pipelines.engine.state.schema import current_version as _current_version
from pipelines.engine.state.sql import (
    SQLITE_BEGIN,
    cursor_upsert,
    entry_from_row,
    event_from_row,
    ledger_row,
    ledger_upsert,
    open_engine,
    outcome_event,
    readback_upsert,
    run_from_row,
)

#: keys per ``IN (…)`` list: far below SQLite's 32 766 and PostgreSQL's 65 535 parameters
IN_CHUNK = 500


def _now() -> datetime:
    return datetime.now(UTC)


def _chunks(items: Sequence[str], size: int = IN_CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


#: a run begun in this context and not finished yet: (id, source, resource, kind)
_OpenRun = tuple[int, str, str | None, str]


class StateStore:
    """Runs, cursors and the ledger of one shopsync installation, in one database.

    ``url`` is a SQLAlchemy URL: ``sqlite:///path/state.db`` (the parent folder is
    created) or ``postgresql+psycopg://user:password@host/db``. Opening creates the schema,
    or upgrades it, before anything else happens.
    """

    def __init__(self, url: str, *, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.dialect = make_url(url).get_backend_name()
        self._engine = open_engine(url)
        self._upsert = ledger_upsert(self.dialect)
        self._written, self._analyze_at = 0, 1_000  # see _maybe_analyze
        self._current: ContextVar[Connection | None] = ContextVar(
            f"shopsync_state_{id(self)}", default=None
        )
        #: the runs begun in this context and not finished, innermost last: events name them
        self._runs: ContextVar[tuple[_OpenRun, ...]] = ContextVar(
            f"shopsync_runs_{id(self)}", default=()
        )
        try:
            with self._connection(write=True) as conn:
                migrate(conn, migrations)
        except BaseException:
            self._engine.dispose()
            raise

    @classmethod
    def default_url(cls) -> str:
        """``$SHOPSYNC_HOME/state.db``, ``SHOPSYNC_HOME`` defaulting to ``~/.shopsync``."""
        home = Path(os.environ.get("SHOPSYNC_HOME") or "~/.shopsync").expanduser().absolute()
        return f"sqlite:///{home / 'state.db'}"

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        with self._connection() as conn:
            return _current_version(conn)

    # -- transactions

    @contextmanager
    def _connection(self, *, write: bool = False) -> Iterator[Connection]:
        """The connection of the open ``transaction()``, or a new one-transaction one."""
        current = self._current.get()
        if current is not None:
            yield current
            return
        with self._engine.connect() as conn:
            if write and self.dialect == "sqlite":
                conn.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
            with conn.begin():
                yield conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Make every store call inside the block one transaction: all or nothing.

        Nested blocks join the outer one. The block holds a connection (and on SQLite the
        write lock) until it ends: keep network calls out of it.
        """
        if self._current.get() is not None:
            yield
            return
        with self._connection(write=True) as conn:
            token = self._current.set(conn)
            try:
                yield
            finally:
                self._current.reset(token)

    # -- runs

    def start_run(
        self,
        source: str,
        resource: str | None,
        kind: str,
        window_start: datetime | None = None,
        window_end: datetime | None = None,
    ) -> int:
        """Record that a run began (status ``running``); returns its id.

        Older runs of the same source and stream (or resource; ``None`` for a whole source)
        still ``running`` are marked ``interrupted``: their process was killed, or lost, before
        it could say how they ended. The rule cannot tell a dead process from a live one, so
        two runs of one stream at once would mark the first interrupted while it runs; its own
        ``finish_run`` then puts its real outcome back (the Dagster assets of a source share a
        pool and never run at once).
        """
        now = _now()
        same = runs.c.resource.is_(None) if resource is None else runs.c.resource == resource
        with self._connection(write=True) as conn:
            conn.execute(
                runs.update()
                .where(runs.c.source == source, same, runs.c.status == "running")
                .values(status="interrupted",
                        error=f"still running when a new run started at {now:%Y-%m-%d %H:%M:%S}"
                              " UTC: its process was killed or lost")
            )
            result = conn.execute(
                runs.insert().values(
                    source=source,
                    resource=resource,
                    kind=kind,
                    status="running",
                    window_start=window_start,
                    window_end=window_end,
                    started_at=now,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
        run_id = int(key[0])
        self._runs.set((*self._runs.get(), (run_id, source, resource, kind)))
        return run_id

    def finish_run(
        self,
        run_id: int,
        status: str,
        counts: Mapping[str, int | float],
        error: str | None = None,
    ) -> None:
        with self._connection(write=True) as conn:
            result = conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(status=status, finished_at=_now(), counts=dict(counts), error=error)
            )
            if result.rowcount == 0:
                raise KeyError(f"no run {run_id}")
        self._runs.set(tuple(run for run in self._runs.get() if run[0] != run_id))

    def _run_for(self, source: str, resource: str | None = None,
                 kind: str | None = None) -> int | None:
        """The innermost unfinished run of ``source`` begun in this context (of ``resource``
        and ``kind`` when given): the run an event happens in."""
        for run_id, run_source, run_resource, run_kind in reversed(self._runs.get()):
            if run_source == source and (resource is None or run_resource == resource) and (
                kind is None or run_kind == kind
            ):
                return run_id
        return None

    def get_run(self, run_id: int) -> RunRecord | None:
        with self._connection() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).one_or_none()
        return run_from_row(row) if row is not None else None

    def recent_runs(self, source: str | None = None, limit: int = 20) -> list[RunRecord]:
        """The latest runs first."""
        query = select(runs).order_by(runs.c.id.desc()).limit(limit)
        if source is not None:
            query = query.where(runs.c.source == source)
        with self._connection() as conn:
            return [run_from_row(row) for row in conn.execute(query)]

    # -- cursors

    def get_cursor(self, source: str, stream: str) -> Position | None:
        query = select(cursors.c.changed_at, cursors.c.record_id).where(
            cursors.c.source == source, cursors.c.stream == stream
        )
        with self._connection() as conn:
            row = conn.execute(query).one_or_none()
        return Position(row.changed_at, row.record_id) if row is not None else None

    def set_cursor(self, source: str, stream: str, position: Position) -> None:
        """Move the stream's cursor to ``position`` (backwards too: that is a reset)."""
        with self._connection(write=True) as conn:
            self._write_cursor(conn, source, stream, position, _now())

    def cursors(self, source: str | None = None) -> dict[tuple[str, str], Position]:
        """Every cursor, by (source, stream): for status pages."""
        query = select(cursors).order_by(cursors.c.source, cursors.c.stream)
        if source is not None:
            query = query.where(cursors.c.source == source)
        with self._connection() as conn:
            return {
                (row.source, row.stream): Position(row.changed_at, row.record_id)
                for row in conn.execute(query)
            }

    def delete_cursor(self, source: str, stream: str) -> None:
        """Forget the stream's cursor: the next run reads the stream from its beginning."""
        with self._connection(write=True) as conn:
            conn.execute(
                cursors.delete().where(cursors.c.source == source, cursors.c.stream == stream)
            )

    def _write_cursor(
        self, conn: Connection, source: str, stream: str, position: Position, now: datetime
    ) -> None:
        conn.execute(cursor_upsert(self.dialect, source, stream, position, now))

    # -- ledger

    def ledger(self, source: str, resource: str, keys: Sequence[str]) -> dict[str, LedgerEntry]:
        """The entries of ``keys`` that the ledger knows, by key."""
        found: dict[str, LedgerEntry] = {}
        unique = list(dict.fromkeys(keys))
        with self._connection() as conn:
            for chunk in _chunks(unique):
                query = select(ledger).where(
                    ledger.c.source == source,
                    ledger.c.resource == resource,
                    ledger.c.item_key.in_(chunk),
                )
                found.update((row.item_key, entry_from_row(row)) for row in conn.execute(query))
        return found

    def record(
        self,
        source: str,
        resource: str,
        outcomes: Sequence[Outcome],
        *,
        cursor: tuple[str, Position] | None = None,
    ) -> None:
        """Upsert the outcomes by key, and move ``cursor`` (stream, position) if given: one
        transaction, durable when this returns.

        Per key: ``content_hash``, ``status``, ``errors`` and ``payload`` become the
        outcome's (the payload is dropped for accepted, visible and deleted items);
        ``attempts`` counts consecutive unsuccessful sends — +1 for rejected or failed, back
        to 0 for accepted or visible, unchanged otherwise (quarantined, parked and deleted
        are no sends); ``accepted_at``/``accepted_hash`` are set when accepted;
        ``visible_at`` is cleared by a new acceptance and set by the first visible outcome
        after it; ``first_seen_at`` and a known ``source_record_id`` are kept. A key that
        appears twice in ``outcomes`` is applied twice, in order. Each outcome is an event
        of its item, named after its status.
        """
        if not outcomes and cursor is None:
            return
        now = _now()
        rounds: list[dict[str, dict[str, Any]]] = []
        for outcome in outcomes:
            row = ledger_row(source, resource, outcome, now)
            # the n-th outcome of a key goes to the n-th round: each executemany sees a key
            # once, so a driver may batch it into multi-row statements (PostgreSQL refuses
            # one statement that updates a row twice)
            for batch in rounds:
                if outcome.key not in batch:
                    batch[outcome.key] = row
                    break
            else:
                rounds.append({outcome.key: row})
        run_id = self._run_for(source)
        with self._connection(write=True) as conn:
            for batch in rounds:
                conn.execute(self._upsert, list(batch.values()))
            if outcomes:
                conn.execute(events.insert(), [outcome_event(source, resource, outcome, now,
                                                             run_id) for outcome in outcomes])
            if cursor is not None:
                self._write_cursor(conn, source, cursor[0], cursor[1], now)
        self._maybe_analyze(len(outcomes))

    def _maybe_analyze(self, written: int) -> None:
        """PostgreSQL: ANALYZE the ledger when this store has written 1 000, 10 000,
        100 000… outcomes. A new ledger filling fast has no statistics until autovacuum's
        first pass (a minute or more); until then the planner scans a whole resource for
        each look-up instead of using the primary key (measured: 2 000 instead of 58 000
        keys/s at 100 000 entries)."""
        if self.dialect != "postgresql":
            return
        self._written += written
        if self._written < self._analyze_at or self._current.get() is not None:
            return
        self._analyze_at = self._written * 10
        with self._engine.connect() as conn, conn.begin():
            conn.execute(text(f"ANALYZE {ledger.name}"))

    def entries(
        self,
        source: str,
        resource: str,
        statuses: Collection[ItemStatus] | None = None,
        limit: int | None = None,
        after_key: str | None = None,
    ) -> list[LedgerEntry]:
        """Entries in key order (byte order), after ``after_key``: pass the last key of a
        page to get the next one."""
        query = (
            select(ledger)
            .where(ledger.c.source == source, ledger.c.resource == resource)
            .order_by(ledger.c.item_key)
        )
        if statuses is not None:
            query = query.where(ledger.c.status.in_([ItemStatus(s).value for s in statuses]))
        if after_key is not None:
            query = query.where(ledger.c.item_key > after_key)
        if limit is not None:
            query = query.limit(limit)
        with self._connection() as conn:
            return [entry_from_row(row) for row in conn.execute(query)]

    def keys_of_records(
        self, source: str, resource: str, record_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """Source record id -> the ledger keys of the items it became (not yet deleted)."""
        found: dict[str, list[str]] = {}
        with self._connection() as conn:
            for chunk in _chunks(list(dict.fromkeys(record_ids))):
                rows = conn.execute(
                    select(ledger.c.source_record_id, ledger.c.item_key).where(
                        ledger.c.source == source, ledger.c.resource == resource,
                        ledger.c.source_record_id.in_(chunk),
                        ledger.c.status != ItemStatus.DELETED.value,
                    )
                )
                for record_id, key in rows:
                    found.setdefault(record_id, []).append(key)
        return found

    def record_count(self, source: str, resource: str) -> int:
        """How many distinct source records gave items of ``resource`` (deleted ones aside)."""
        query = select(func.count(func.distinct(ledger.c.source_record_id))).where(
            ledger.c.source == source, ledger.c.resource == resource,
            ledger.c.status != ItemStatus.DELETED.value,
        )
        with self._connection() as conn:
            return int(conn.execute(query).scalar() or 0)

    def window_counts(
        self, source: str, resource: str, start: datetime, end: datetime
    ) -> tuple[int, dict[str, int]]:
        """Items of ``resource`` whose source record changed in ``[start, end)``: how many
        distinct source records, and how many items per status."""
        where = (ledger.c.source == source, ledger.c.resource == resource,
                 ledger.c.changed_at >= start, ledger.c.changed_at < end)
        records = select(func.count(func.distinct(ledger.c.source_record_id))).where(
            *where, ledger.c.status != ItemStatus.DELETED.value)
        statuses = select(ledger.c.status, func.count()).where(*where).group_by(ledger.c.status)
        with self._connection() as conn:
            total = int(conn.execute(records).scalar() or 0)
            return total, {status: int(n) for status, n in conn.execute(statuses)}

    def count_resend(self, source: str, resource: str, keys: Sequence[str]) -> None:
        """Reconciliation sent these again: one more resend each."""
        with self._connection(write=True) as conn:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                conn.execute(
                    ledger.update()
                    .where(ledger.c.source == source, ledger.c.resource == resource,
                           ledger.c.item_key.in_(chunk))
                    .values(resends=ledger.c.resends + 1)
                )

    def counts(
        self, source: str | None = None, resource: str | None = None
    ) -> dict[str, dict[str, int]]:
        """Items per status, per resource: ``{"orders": {"accepted": 10, …}, …}``."""
        query = select(ledger.c.resource, ledger.c.status, func.count()).group_by(
            ledger.c.resource, ledger.c.status
        )
        if source is not None:
            query = query.where(ledger.c.source == source)
        if resource is not None:
            query = query.where(ledger.c.resource == resource)
        result: dict[str, dict[str, int]] = {}
        with self._connection() as conn:
            for res, status, n in conn.execute(query):
                result.setdefault(res, {})[status] = int(n)
        return result

    def mark(
        self, source: str, resource: str, keys: Sequence[str], status: ItemStatus, *,
        at: datetime | None = None, details: Mapping[str, dict[str, Any]] | None = None,
    ) -> int:
        """Set the status of known keys without a new outcome (visible after a read-back,
        parked, deleted…), as of ``at`` (default now); unknown keys are ignored. Returns how
        many entries changed. Each changed entry gets an event named after the status, with
        its ``details`` when given.

        Marking accepted or visible clears errors and payload, resets ``attempts`` and
        makes the current content hash the accepted one; deleted drops the payload; other
        statuses keep everything but the status. Visible keeps a ``visible_at`` an earlier
        read-back set (``note_seen``): it is when the item was first seen.
        """
        status = ItemStatus(status)
        now = at or _now()
        values: dict[str, Any] = {"status": status.value, "updated_at": now}
        if status in SUCCESSFUL:
            values |= {"attempts": 0, "errors": [], "accepted_hash": ledger.c.content_hash}
        if status in NO_PAYLOAD:
            values["payload"] = None
        if status is ItemStatus.ACCEPTED:
            values |= {"accepted_at": now, "visible_at": None, "unseen_at": None}
        elif status is ItemStatus.VISIBLE:
            moment = literal(now, UTCDateTime())
            values |= {
                "accepted_at": func.coalesce(ledger.c.accepted_at, moment),
                "visible_at": func.coalesce(ledger.c.visible_at, moment),
            }
        changed = 0
        with self._connection(write=True) as conn:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                result = conn.execute(
                    ledger.update()
                    .where(
                        ledger.c.source == source,
                        ledger.c.resource == resource,
                        ledger.c.item_key.in_(chunk),
                    )
                    .values(values)
                )
                changed += result.rowcount
            self._events_of(conn, source, resource, keys, status.value, now,
                            self._run_for(source), details)
        return changed

    def note_seen(self, source: str, resource: str, details: Mapping[str, dict[str, Any]],
                  at: datetime) -> None:
        """A read-back right after the sync showed these accepted items as sent, at ``at``:
        that is when they were first seen (``visible_at``); they stay accepted until
        reconciliation confirms them. Each gets a ``seen`` event with its ``details``."""
        keys = list(details)
        if not keys:
            return
        moment = literal(at, UTCDateTime())
        with self._connection(write=True) as conn:
            for chunk in _chunks(keys):
                conn.execute(
                    ledger.update()
                    .where(ledger.c.source == source, ledger.c.resource == resource,
                           ledger.c.item_key.in_(chunk),
                           ledger.c.status == ItemStatus.ACCEPTED.value,
                           ledger.c.visible_at.is_(None))
                    .values(visible_at=moment)
                )
            self._events_of(conn, source, resource, keys, EventKind.SEEN.value, at,
                            self._run_for(source), details)

    def note_unseen(self, source: str, resource: str, keys: Sequence[str], at: datetime) -> None:
        """A read-back at ``at`` did not show these accepted items as sent: the lower bound of
        their visibility lag (no event: an item waiting would add one per read-back)."""
        moment = literal(at, UTCDateTime())
        with self._connection(write=True) as conn:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                conn.execute(
                    ledger.update()
                    .where(ledger.c.source == source, ledger.c.resource == resource,
                           ledger.c.item_key.in_(chunk),
                           ledger.c.status == ItemStatus.ACCEPTED.value,
                           ledger.c.visible_at.is_(None))
                    .values(unseen_at=moment)
                )

    def note_audit(self, source: str, resource: str, missing: Sequence[str],
                   different: Sequence[str]) -> None:
        """An audit found these visible items missing at the destination, or different there
        from what was confirmed: an event each, in the resource's audit run."""
        now, run_id = _now(), self._run_for(source, resource, "audit")
        with self._connection(write=True) as conn:
            self._events_of(conn, source, resource, missing, EventKind.MISSING.value, now,
                            run_id)
            self._events_of(conn, source, resource, different, EventKind.DIFFERENT.value, now,
                            run_id)

    def _events_of(self, conn: Connection, source: str, resource: str, keys: Sequence[str],
                   kind: str, at: datetime, run_id: int | None,
                   details: Mapping[str, dict[str, Any]] | None = None) -> None:
        """An event of ``kind`` for each of ``keys`` the ledger knows, carrying the entry's
        content hash and errors as they are now (and its ``details``, when given)."""
        if not keys:
            return
        columns = ["source", "resource", "item_key", "at", "run_id", "kind", "content_hash",
                   "errors", "detail"]
        row = (ledger.c.source, ledger.c.resource, ledger.c.item_key,
               literal(at, UTCDateTime()), literal(run_id, Integer()), literal(kind, String()),
               ledger.c.content_hash, ledger.c.errors)
        where = (ledger.c.source == source, ledger.c.resource == resource)
        if details is None:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                conn.execute(events.insert().from_select(columns, select(
                    *row, literal(None, events.c.detail.type)
                ).where(*where, ledger.c.item_key.in_(chunk))))
            return
        # one statement per key, run as executemany: each carries its own detail
        per_key = events.insert().from_select(columns, select(
            *row, bindparam("e_detail", type_=events.c.detail.type)
        ).where(*where, ledger.c.item_key == bindparam("e_key")))
        conn.execute(per_key, [{"e_key": key, "e_detail": details.get(key)}
                               for key in dict.fromkeys(keys)])

    def events(self, source: str, resource: str, key: str) -> list[ItemEvent]:
        """The story of one item: its events in the order they happened (written)."""
        query = (
            select(events, runs.c.kind.label("run_kind"))
            .select_from(events.outerjoin(runs, runs.c.id == events.c.run_id))
            .where(events.c.source == source, events.c.resource == resource,
                   events.c.item_key == key)
            .order_by(events.c.id)
        )
        with self._connection() as conn:
            return [event_from_row(row) for row in conn.execute(query)]

    def prune_events(self, source: str, before: datetime) -> int:
        """Delete the events of ``source`` that happened before ``before``; how many. The
        ledger rows stay: an item's state and its last moments outlive its story."""
        with self._connection(write=True) as conn:
            result = conn.execute(events.delete().where(events.c.source == source,
                                                        events.c.at < before))
        return int(result.rowcount or 0)

    def keys_for(self, source: str, resource: str, ident: str) -> list[str]:
        """The ledger keys ``ident`` names: itself if it is a key, else the items the source
        record of that id became (whatever their state), in key order."""
        where = (ledger.c.source == source, ledger.c.resource == resource)
        with self._connection() as conn:
            if conn.execute(select(ledger.c.item_key).where(
                    *where, ledger.c.item_key == ident)).first() is not None:
                return [ident]
            return list(conn.execute(select(ledger.c.item_key).where(
                *where, ledger.c.source_record_id == ident).order_by(ledger.c.item_key)
            ).scalars())

    # -- audits: what visible items read back as

    def keep_readbacks(self, source: str, resource: str, hashes: Mapping[str, str],
                       at: datetime | None = None) -> None:
        """Items were read back (confirmed, or found as they were by an audit): keep what
        they showed, checked ``at`` (default now)."""
        if not hashes:
            return
        now = at or _now()
        rows = [{"source": source, "resource": resource, "item_key": key,
                 "readback_hash": value, "checked_at": now} for key, value in hashes.items()]
        with self._connection(write=True) as conn:
            conn.execute(readback_upsert(self.dialect), rows)

    def readbacks(self, source: str, resource: str, keys: Sequence[str]) -> dict[str, str]:
        """Key -> what the item read back as when last confirmed, for the keys that have one."""
        found: dict[str, str] = {}
        with self._connection() as conn:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                query = select(readbacks.c.item_key, readbacks.c.readback_hash).where(
                    readbacks.c.source == source, readbacks.c.resource == resource,
                    readbacks.c.item_key.in_(chunk))
                found.update((key, value) for key, value in conn.execute(query))
        return found

    def least_recently_checked(self, source: str, resource: str, limit: int) -> list[LedgerEntry]:
        """Up to ``limit`` visible entries, those never checked or checked longest ago first:
        an audit's sample, so that successive samples cover every item in turn."""
        joined = ledger.outerjoin(readbacks, (readbacks.c.source == ledger.c.source)
                                  & (readbacks.c.resource == ledger.c.resource)
                                  & (readbacks.c.item_key == ledger.c.item_key))
        query = (
            select(ledger).select_from(joined)
            .where(ledger.c.source == source, ledger.c.resource == resource,
                   ledger.c.status == ItemStatus.VISIBLE.value)
            # never checked (NULL) first, on both backends
            .order_by(readbacks.c.checked_at.is_not(None), readbacks.c.checked_at,
                      ledger.c.item_key)
            .limit(limit)
        )
        with self._connection() as conn:
            return [entry_from_row(row) for row in conn.execute(query)]

    def latest_runs(self, source: str, kind: str) -> dict[str, RunRecord]:
        """The latest finished run of ``kind`` per resource (or stream) of ``source``."""
        latest = (
            select(func.max(runs.c.id))
            .where(runs.c.source == source, runs.c.kind == kind,
                   runs.c.finished_at.is_not(None), runs.c.resource.is_not(None))
            .group_by(runs.c.resource)
        )
        with self._connection() as conn:
            rows = conn.execute(select(runs).where(runs.c.id.in_(latest)))
            return {row.resource: run_from_row(row) for row in rows}
