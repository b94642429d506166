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

A read that still fails after the client's retries costs only its batch: those items stay
accepted for the next run, the others are checked, and the report says what could not be
checked and why. When whole pages keep failing the destination is taken to be down and the
rest is counted as not checked instead of read.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import AuthenticationError, MarketingApiError, NotFoundError
from connectors.marketing.query import Operator, Query
from connectors.marketing.readback import echoed_fields, projection, readback_hash
from connectors.marketing.resources import SYNC_RESOURCES, SyncResource
from connectors.marketing.writer import BulkWriter
from pipelines.engine.state import ItemStatus, LedgerEntry, Outcome, StateStore
from pipelines.engine.sync import Clock, ledger_key, wall_clock

IDS_PER_READ = 100
PAGE = IDS_PER_READ * 10  # ledger entries fetched at once: reads for several slots
#: pages in a row whose every read failed, after which the destination is taken to be down
FAILING_PAGES = 2


def item_id(spec: SyncResource, entry: LedgerEntry) -> str:
    """The id an entry's item has at the destination (the first part of its key once its
    payload is dropped)."""
    value = (entry.payload or {}).get(spec.id_field)
    return str(value) if value is not None else entry.key.split("|", 1)[0]


def parent_id(spec: SyncResource, entry: LedgerEntry) -> str:
    """The parent a nested item is listed under: the one its payload names, else the source
    record it came from (a customer's addresses, a product's variations and images)."""
    assert spec.parent_field is not None
    return str((entry.payload or {}).get(spec.parent_field) or entry.source_record_id)


@dataclass
class ReadBack:
    """What reading a page of entries back found."""

    #: key -> read-back hash of every item the listing showed
    seen: dict[str, str] = field(default_factory=dict)
    #: entries whose batch was read (an entry missing from ``seen`` is not at the destination)
    read: list[LedgerEntry] = field(default_factory=list)
    #: entries whose batch could not be read, and why (one message per failed batch)
    unread: list[LedgerEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: False when the API does not serve the resource's listing (404)
    served: bool = True


class Reader:
    """Reads ledger entries back from the resource listings, ``concurrency`` reads in flight
    (the API answers reads independently; one at a time leaves both sides idle)."""

    def __init__(self, client: MarketingClient, id_data_source: int | None,
                 concurrency: int = 4) -> None:
        self.client = client
        self.id_data_source = id_data_source
        self.concurrency = concurrency

    async def read_back(self, resource: str, entries: Sequence[LedgerEntry]) -> ReadBack:
        """Read ``entries`` back in batches that fit a URL; a batch whose read fails after
        the client's retries is returned unread with its error (a wrong key still raises)."""
        slots = asyncio.Semaphore(self.concurrency)
        batches = [list(entries[start:start + IDS_PER_READ])
                   for start in range(0, len(entries), IDS_PER_READ)]

        async def read(batch: list[LedgerEntry]) -> dict[str, str] | MarketingApiError:
            async with slots:
                try:
                    return await self._read(resource, batch)
                except AuthenticationError:
                    raise
                except MarketingApiError as exc:  # 404 included: told apart below
                    return exc

        found = ReadBack()
        for batch, seen in zip(batches, await asyncio.gather(*(read(b) for b in batches)),
                               strict=True):
            if isinstance(seen, NotFoundError):
                found.served = False
            if isinstance(seen, MarketingApiError):
                found.unread += batch
                found.errors.append(str(seen))
            else:
                found.read += batch
                found.seen.update(seen)
        return found

    async def _read(self, resource: str, entries: list[LedgerEntry]) -> dict[str, str]:
        """Key -> read-back hash of the items of ``entries`` the listing shows."""
        spec = SYNC_RESOURCES[resource]
        fields = echoed_fields(resource)
        ids = sorted({item_id(spec, e) for e in entries})
        query = Query().where(spec.id_field, Operator.IN, *ids).select(*fields)
        if self.id_data_source is not None:
            query = query.where("data_source_id", Operator.EQUALS, self.id_data_source)
        rows: list[dict[str, Any]] = []
        if spec.parent_field is None:
            rows = (await self.client.list_resource(resource, query.page(1000))).data
        else:  # nested items are listed under their parent, one parent at a time
            for parent in sorted({parent_id(spec, e) for e in entries}):
                rows += (await self.client.list_resource(resource, query.page(1000),
                                                         parent_id=parent)).data
        seen = {}
        for row in rows:
            key = ledger_key(tuple(row.get(f) for f in spec.key_fields)
                             if len(spec.key_fields) > 1 else row.get(spec.id_field))
            seen[key] = readback_hash({f: row.get(f) for f in fields})
        return seen


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
    #: items whose read-back failed (kept accepted for the next run), and why: message -> items
    unchecked: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def could_not_check(self, entries: int, errors: Sequence[str]) -> None:
        self.unchecked += entries
        for error in errors:
            self.failures[error] += 1

    def lag(self) -> dict[str, float | None]:
        """Visibility lag of the items confirmed in this run, in seconds."""
        if not self.lags:
            return {"p50": None, "p95": None, "max": None}
        ordered = sorted(self.lags)

        def pct(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)

        return {"p50": pct(0.5), "p95": pct(0.95), "max": round(ordered[-1], 3)}


COUNTED = ("checked", "visible", "waiting", "resent", "parked", "deleted", "unchecked")


@dataclass
class ReconcileReport:
    source: str
    resources: dict[str, ResourceCheck] = field(default_factory=dict)
    #: what could not be checked beyond single read-backs (deletions, completeness), in words
    problems: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int | float]:
        """Counts over every resource, and the lag over every confirmed item."""
        total = ResourceCheck()
        for check in self.resources.values():
            for name in COUNTED:
                setattr(total, name, getattr(total, name) + getattr(check, name))
            total.lags += check.lags
        lag = total.lag()
        return {
            **{name: getattr(total, name) for name in COUNTED},
            **{f"lag_{k}": v for k, v in lag.items() if v is not None},
        }

    def not_checked(self) -> list[str]:
        """What this run could not check, one line per resource or problem; empty when it
        checked everything it set out to."""
        lines = []
        for resource, c in self.resources.items():
            if c.unchecked:
                why = "; ".join(f"{error}" + (f" (×{n})" if n > 1 else "")
                                for error, n in c.failures.most_common(3))
                lines.append(f"{c.unchecked} {resource} items could not be read back (kept"
                             f" for the next run): {why}")
        return lines + self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            resource: {
                **{name: getattr(c, name) for name in COUNTED},
                "verifiable": c.verifiable,
                "lag_seconds": c.lag(),
                "failures": dict(c.failures),
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
        self.reader = Reader(client, id_data_source, concurrency)
        #: pages in a row whose every read failed
        self._failed_pages = 0

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
            if self._failed_pages >= FAILING_PAGES:  # counted, not read: the API is down
                check.could_not_check(len(entries), [])
                continue
            found = await self.reader.read_back(resource, entries)
            if not found.served:
                check.verifiable = False
                return check
            self._failed_pages = self._failed_pages + 1 if not found.read else 0
            if found.unread:
                check.could_not_check(len(found.unread), found.errors)
            if found.read:
                await self._settle(resource, found.read, found.seen, check)

    async def _settle(self, resource: str, entries: list[LedgerEntry], seen: dict[str, str],
                      check: ResourceCheck) -> None:
        now = self.clock()
        late: list[LedgerEntry] = []
        give_up: list[str] = []
        visible: dict[str, str] = {}  # key -> what it read back as, for later audits
        for entry in entries:
            check.checked += 1
            sent = readback_hash(projection(resource, entry.payload or {}))
            if seen.get(entry.key) == sent:
                visible[entry.key] = sent
                if entry.accepted_at is not None:
                    check.lags.append((now - entry.accepted_at).total_seconds())
            elif entry.accepted_at is not None and now - entry.accepted_at < self.deadline:
                check.waiting += 1
            elif entry.resends >= self.max_resends:
                give_up.append(entry.key)
            else:
                late.append(entry)
        if visible:
            with self.state.transaction():
                self.state.mark(self.source, resource, list(visible), ItemStatus.VISIBLE)
                self.state.keep_readbacks(self.source, resource, visible)
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
