"""Reconciliation: confirm that accepted items became visible, and repair what did not.

The API answers a write before applying it, and may never apply some. For every item the
ledger holds as accepted, this reads the resource's listing back (``IN`` filters on the
item ids, in batches that fit a URL, projected on the fields the listing echoes) and
compares it with what was sent:

- the same → ``visible`` (its payload is dropped; the lag since acceptance is measured);
- missing or different, and accepted longer ago than the deadline → sent again, at most
  ``max_resends`` times, then ``parked`` for a person to look at;
- missing or different within the deadline → left alone: it may still arrive.

Nested items (addresses, variations, images) are read under their parent. A resource whose
listing the API does not serve (404) is reported as not verifiable, never as confirmed.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import NotFoundError
from connectors.marketing.query import Operator, Query
from connectors.marketing.readback import echoed_fields, projection, readback_hash
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.writer import BulkWriter
from pipelines.engine.state import ItemStatus, LedgerEntry, Outcome, StateStore
from pipelines.engine.sync import Clock, ledger_key, wall_clock

IDS_PER_READ = 100
PAGE = IDS_PER_READ * 10  # ledger entries fetched at once: reads for several slots


@dataclass
class ResourceCheck:
    checked: int = 0
    visible: int = 0
    waiting: int = 0
    resent: int = 0
    parked: int = 0
    deleted: int = 0
    lags: list[float] = field(default_factory=list)
    verifiable: bool = True

    def lag(self) -> dict[str, float | None]:
        """Visibility lag of the items confirmed in this run, in seconds."""
        if not self.lags:
            return {"p50": None, "p95": None, "max": None}
        ordered = sorted(self.lags)

        def pct(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)

        return {"p50": pct(0.5), "p95": pct(0.95), "max": round(ordered[-1], 3)}


@dataclass
class ReconcileReport:
    source: str
    resources: dict[str, ResourceCheck] = field(default_factory=dict)

    def totals(self) -> dict[str, int | float]:
        """Counts over every resource, and the lag over every confirmed item."""
        total = ResourceCheck()
        for check in self.resources.values():
            for name in ("checked", "visible", "waiting", "resent", "parked", "deleted"):
                setattr(total, name, getattr(total, name) + getattr(check, name))
            total.lags += check.lags
        lag = total.lag()
        return {
            "checked": total.checked, "visible": total.visible, "waiting": total.waiting,
            "resent": total.resent, "parked": total.parked, "deleted": total.deleted,
            **{f"lag_{k}": v for k, v in lag.items() if v is not None},
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            resource: {
                "checked": c.checked, "visible": c.visible, "waiting": c.waiting,
                "resent": c.resent, "parked": c.parked, "deleted": c.deleted,
                "verifiable": c.verifiable,
                "lag_seconds": c.lag(),
            }
            for resource, c in self.resources.items()
        }


class Reconciler:
    def __init__(
        self,
        *,
        source: str,
        state: StateStore,
        client: MarketingClient,
        id_data_source: int | None,
        deadline: timedelta = timedelta(minutes=10),
        max_resends: int = 3,
        concurrency: int = 4,
        clock: Clock = wall_clock,
    ) -> None:
        self.source = source
        self.state = state
        self.client = client
        self.id_data_source = id_data_source
        self.deadline = deadline
        self.max_resends = max_resends
        self.concurrency = concurrency
        #: what "now" is when an item's time since acceptance is held against the deadline
        self.clock = clock

    async def run(self, resources: list[str]) -> ReconcileReport:
        report = ReconcileReport(self.source)
        for resource in resources:
            report.resources[resource] = await self._resource(resource)
        return report

    async def _resource(self, resource: str) -> ResourceCheck:
        check = ResourceCheck()
        after: str | None = None
        while True:
            entries = self.state.entries(self.source, resource, {ItemStatus.ACCEPTED},
                                         limit=PAGE, after_key=after)
            if not entries:
                return check
            after = entries[-1].key
            chunks = [entries[start:start + IDS_PER_READ]
                      for start in range(0, len(entries), IDS_PER_READ)]
            seen = await self._read_all(resource, chunks)
            if seen is None:
                check.verifiable = False
                return check
            for chunk, shown in zip(chunks, seen, strict=True):
                await self._settle(resource, chunk, shown, check)

    async def _read_all(self, resource: str,
                        chunks: list[list[LedgerEntry]]) -> list[dict[str, str]] | None:
        """The read-backs of ``chunks``, up to ``concurrency`` in flight (the API answers
        reads independently; one at a time leaves both sides idle half of the time); None
        when the API does not serve the listing."""
        slots = asyncio.Semaphore(self.concurrency)

        async def read(chunk: list[LedgerEntry]) -> dict[str, str] | None:
            async with slots:
                try:
                    return await self._read(resource, chunk)
                except NotFoundError:
                    return None

        seen = await asyncio.gather(*(read(chunk) for chunk in chunks))
        return None if any(s is None for s in seen) else [s for s in seen if s is not None]

    async def _read(self, resource: str, entries: list[LedgerEntry]) -> dict[str, str]:
        """Key -> read-back hash of the items of ``entries`` the listing shows."""
        spec = SYNC_RESOURCES[resource]
        fields = echoed_fields(resource)
        ids = sorted({str((e.payload or {}).get(spec.id_field)) for e in entries})
        query = Query().where(spec.id_field, Operator.IN, *ids).select(*fields)
        if self.id_data_source is not None:
            query = query.where("data_source_id", Operator.EQUALS, self.id_data_source)
        rows: list[dict[str, Any]] = []
        if spec.parent_field is None:
            rows = (await self.client.list_resource(resource, query.page(1000))).data
        else:  # nested items are listed under their parent, one parent at a time
            parents = sorted({str((e.payload or {}).get(spec.parent_field)) for e in entries})
            for parent in parents:
                rows += (await self.client.list_resource(resource, query.page(1000),
                                                         parent_id=parent)).data
        seen = {}
        for row in rows:
            key = ledger_key(tuple(row.get(f) for f in spec.key_fields)
                             if len(spec.key_fields) > 1 else row.get(spec.id_field))
            seen[key] = readback_hash({f: row.get(f) for f in fields})
        return seen

    async def _settle(self, resource: str, entries: list[LedgerEntry], seen: dict[str, str],
                      check: ResourceCheck) -> None:
        now = self.clock()
        visible, late, give_up = [], [], []
        for entry in entries:
            check.checked += 1
            sent = readback_hash(projection(resource, entry.payload or {}))
            if seen.get(entry.key) == sent:
                visible.append(entry.key)
                if entry.accepted_at is not None:
                    check.lags.append((now - entry.accepted_at).total_seconds())
            elif entry.accepted_at is not None and now - entry.accepted_at < self.deadline:
                check.waiting += 1
            elif entry.resends >= self.max_resends:
                give_up.append(entry.key)
            else:
                late.append(entry)
        if visible:
            self.state.mark(self.source, resource, visible, ItemStatus.VISIBLE)
            check.visible += len(visible)
        if give_up:
            self.state.mark(self.source, resource, give_up, ItemStatus.PARKED)
            check.parked += len(give_up)
        if late:
            await self._resend(resource, late, check)

    async def _resend(self, resource: str, entries: list[LedgerEntry], check: ResourceCheck) -> None:
        by_key = {e.key: e for e in entries if e.payload}
        writer = BulkWriter(self.client, resource, concurrency=self.concurrency)
        outcomes: list[Outcome] = []
        counts: Counter[str] = Counter()

        def collect(outcome: Any) -> None:
            key = ledger_key(outcome.key)
            entry = by_key.get(key)
            counts[outcome.status] += 1
            outcomes.append(Outcome(
                key, entry.content_hash if entry else "", ItemStatus(outcome.status),
                entry.source_record_id if entry else None, list(outcome.errors),
                entry.payload if entry else dict(outcome.item or {}),
            ))

        await writer.write_all((e.payload for e in by_key.values() if e.payload),
                               on_outcome=collect)
        self.state.record(self.source, resource, outcomes)
        self.state.count_resend(self.source, resource, list(by_key))
        check.resent += len(by_key)
