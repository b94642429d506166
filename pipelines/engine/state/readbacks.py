"""Audits' memory in the state store: what visible items read back as, and when each was
last checked, so that successive samples cover every item in turn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import select

from pipelines.engine.state.base import StoreBase, in_chunks, utc_now
from pipelines.engine.state.models import ItemStatus, LedgerEntry
from pipelines.engine.state.schema import ledger, readbacks
from pipelines.engine.state.sql import entry_from_row, readback_upsert


class Readbacks(StoreBase):
    """The read-back hash of each confirmed or audited item."""

    def keep_readbacks(self, source: str, resource: str, hashes: Mapping[str, str],
                       at: datetime | None = None) -> None:
        """Items were read back (confirmed, or found as they were by an audit): keep what
        they showed, checked ``at`` (default now)."""
        if not hashes:
            return
        now = at or utc_now()
        rows = [{"source": source, "resource": resource, "item_key": key,
                 "readback_hash": value, "checked_at": now} for key, value in hashes.items()]
        with self._connection(write=True) as conn:
            conn.execute(readback_upsert(self.dialect), rows)

    def readbacks(self, source: str, resource: str, keys: Sequence[str]) -> dict[str, str]:
        """Key -> what the item read back as when last confirmed, for the keys that have one."""
        found: dict[str, str] = {}
        with self._connection() as conn:
            for chunk in in_chunks(keys):
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
