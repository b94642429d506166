"""Each item's story in the state store: the events its changes append (in the transaction
of the change), the audit's findings, and the pruning of old events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, String, bindparam, literal, select

from pipelines.engine.state.base import StoreBase, in_chunks, utc_now
from pipelines.engine.state.models import EventKind, ItemEvent
from pipelines.engine.state.schema import UTCDateTime, events, ledger, runs
from pipelines.engine.state.sql import event_from_row


class ItemEvents(StoreBase):
    """The events of the ledger's items, each naming the run it happened in."""

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
            for chunk in in_chunks(keys):
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

    def note_audit(self, source: str, resource: str, missing: Sequence[str],
                   different: Sequence[str]) -> None:
        """An audit found these visible items missing at the destination, or different there
        from what was confirmed: an event each, in the resource's audit run."""
        now, run_id = utc_now(), self._run_for(source, resource, "audit")
        with self._connection(write=True) as conn:
            self._events_of(conn, source, resource, missing, EventKind.MISSING.value, now,
                            run_id)
            self._events_of(conn, source, resource, different, EventKind.DIFFERENT.value, now,
                            run_id)
