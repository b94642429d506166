"""What changes the item ledger: the outcomes of sends (with the cursor that follows them),
statuses set without a send, what read-backs saw, and resends counted. Each change appends
its item's event in the same transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, func, literal, text

from connectors.sources.base import Position
from pipelines.engine.state.base import in_chunks, utc_now
from pipelines.engine.state.events import ItemEvents
from pipelines.engine.state.many import execute_many
from pipelines.engine.state.models import (
    NO_PAYLOAD,
    SUCCESSFUL,
    EventKind,
    ItemStatus,
    Outcome,
)
from pipelines.engine.state.runs import Cursors
from pipelines.engine.state.schema import UTCDateTime, events, ledger
from pipelines.engine.state.sql import event_columns, ledger_columns

#: accepted items no read-back has shown yet: what ``note_seen`` and ``note_unseen`` change
_ACCEPTED_UNSEEN = (ledger.c.status == ItemStatus.ACCEPTED.value, ledger.c.visible_at.is_(None))
#: the events' insert, one object: ``execute_many`` compiles it once per set of columns
_EVENT_INSERT = events.insert()


class LedgerWrites(ItemEvents, Cursors):
    """The ledger's writes: over the events they append and the cursor ``record`` moves."""

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
        now = utc_now()
        rounds = [ledger_columns(source, resource, batch, now) for batch in _rounds(outcomes)]
        stories = event_columns(source, resource, outcomes, now, self._run_for(source))
        with self._connection(write=True) as conn:
            for columns, shared in rounds:
                execute_many(conn, self._upsert, columns, shared)
            execute_many(conn, _EVENT_INSERT, *stories)
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
        now = at or utc_now()
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
        with self._connection(write=True) as conn:
            changed = self._update_entries(conn, source, resource, keys, values)
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
            self._update_entries(conn, source, resource, keys, {"visible_at": moment},
                                 *_ACCEPTED_UNSEEN)
            self._events_of(conn, source, resource, keys, EventKind.SEEN.value, at,
                            self._run_for(source), details)

    def note_unseen(self, source: str, resource: str, keys: Sequence[str], at: datetime) -> None:
        """A read-back at ``at`` did not show these accepted items as sent: the lower bound of
        their visibility lag (no event: an item waiting would add one per read-back)."""
        moment = literal(at, UTCDateTime())
        with self._connection(write=True) as conn:
            self._update_entries(conn, source, resource, keys, {"unseen_at": moment},
                                 *_ACCEPTED_UNSEEN)

    def count_resend(self, source: str, resource: str, keys: Sequence[str]) -> None:
        """Reconciliation sent these again: one more resend each."""
        with self._connection(write=True) as conn:
            self._update_entries(conn, source, resource, keys,
                                 {"resends": ledger.c.resends + 1})

    def _update_entries(self, conn: Connection, source: str, resource: str,
                        keys: Sequence[str], values: Mapping[str, Any],
                        *where: ColumnElement[bool]) -> int:
        """Set ``values`` on the entries of ``keys`` that also match ``where``; how many
        changed (unknown keys are none)."""
        changed = 0
        for chunk in in_chunks(keys):
            result = conn.execute(
                ledger.update()
                .where(ledger.c.source == source, ledger.c.resource == resource,
                       ledger.c.item_key.in_(chunk), *where)
                .values(values)
            )
            changed += result.rowcount
        return changed


def _rounds(outcomes: Sequence[Outcome]) -> list[Sequence[Outcome]]:
    """The outcomes in rounds that hold each key once, in order: the n-th outcome of a key
    goes to the n-th round. Each executemany sees a key once, so a driver may batch it into
    multi-row statements (PostgreSQL refuses one statement that updates a row twice)."""
    if len({o.key for o in outcomes}) == len(outcomes):
        return [outcomes]
    rounds: list[dict[str, Outcome]] = []
    for outcome in outcomes:
        for batch in rounds:
            if outcome.key not in batch:
                batch[outcome.key] = outcome
                break
        else:
            rounds.append({outcome.key: outcome})
    return [list(batch.values()) for batch in rounds]
