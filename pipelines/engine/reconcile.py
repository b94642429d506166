"""Reconciliation: confirm that accepted items became visible, and repair what did not.

The API answers a write before applying it, and may never apply some. For every item the
ledger holds as accepted, this reads the resource's listing back (``IN`` filters on the
item ids, in batches that fit a URL, projected on the fields the listing echoes) and
compares it with what was sent:

- the same → ``visible`` (its payload is dropped; its visibility lag is measured, see
  ``VisibilityLag``);
- missing or different, and accepted longer ago than the deadline → sent again, at most
  ``max_resends`` times, then ``parked`` for a person to look at;
- missing or different within the deadline → left alone: it may still arrive.

Nested items (addresses, variations, images) are read under their parent. A resource whose
listing the API does not serve (404) is reported as not verifiable, never as confirmed.

A read that still fails after the client's retries costs only its batch: those items stay
accepted for the next run, the others are checked, and the report says what could not be
checked and why. When whole pages keep failing the destination is taken to be down and the
rest is counted as not checked instead of read.

Two figures come out of a confirmation. The *visibility lag* is the time from acceptance to
the first read-back that showed the item; read-backs are moments apart, so it is known only
between the last one that did not show it and the first that did (``VisibilityLag``). The
*time to confirmation* is the time from acceptance to this run's confirmation: how long an
item stays pending, which depends on when reconciliation runs. A sync can read what it just
sent back at short intervals (``VisibilityProbe``, ``tuning.probe_seconds``) so that the lag
is measured finely rather than to the interval between reconciliations.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import AuthenticationError, MarketingApiError, NotFoundError
from connectors.marketing.query import Operator, Query
from connectors.marketing.readback import echoed_fields, projection, readback_hash
from connectors.marketing.resources import SYNC_RESOURCES, SyncResource
from connectors.marketing.writer import BulkWriter
from pipelines.engine.state import ItemStatus, LedgerEntry, Outcome, StateStore
from pipelines.engine.sync import Clock, ledger_key, wall_clock, why

IDS_PER_READ = 100
PAGE = IDS_PER_READ * 10  # ledger entries fetched at once: reads for several slots
#: pages in a row whose every read failed, after which the destination is taken to be down
FAILING_PAGES = 2
#: a probe's first read-back, seconds after the chunk was recorded, and how much longer each
#: next one waits: a lag seen at read k lies between reads k-1 and k, within a factor 1.5
PROBE_FIRST, PROBE_RATIO = 0.1, 1.5
#: items of a chunk a probe reads back: one read each time, a sample spread over the chunk
PROBE_SAMPLE = IDS_PER_READ
#: what a probe's last read may take beyond its bound before the probe is cut short
PROBE_GRACE = 2.0

log = logging.getLogger(__name__)


def _seconds(since: datetime, until: datetime) -> float:
    return max(0.0, (until - since).total_seconds())


@dataclass(frozen=True)
class VisibilityLag:
    """How long one item took to become visible after it was accepted, as far as read-backs
    can tell: between ``low`` (the last read-back that did not show it; 0 if none did) and
    ``high`` (the first that did) seconds."""

    low: float
    high: float

    @classmethod
    def of(cls, accepted_at: datetime, first_seen: datetime,
           unseen_at: datetime | None) -> VisibilityLag:
        high = _seconds(accepted_at, first_seen)
        low = 0.0 if unseen_at is None else min(_seconds(accepted_at, unseen_at), high)
        return cls(round(low, 3), round(high, 3))

    @property
    def resolution(self) -> float:
        """How wide the read-backs leave it: first seen − max(accepted, last unseen check)."""
        return round(self.high - self.low, 3)

    @property
    def measured_finely(self) -> bool:
        return measured_finely(self.high, self.resolution)


def measured_finely(upper: float, resolution: float) -> bool:
    """A lag bound says something about the lag itself when the read-backs were no further
    apart than the lag is long (resolution ≤ its lower bound); otherwise it mostly tells how
    far apart they were."""
    return resolution <= upper - resolution


def seconds_text(value: float | None) -> str:
    """Seconds as a person reads them: hundredths below a second, tenths above."""
    if value is None:
        return "-"
    return f"{value:.2f} s" if value < 1 else f"{value:.1f} s"


def describe_lag(upper: float | None, resolution: float | None) -> str:
    """A visibility-lag figure as a person reads it: an upper bound and its resolution."""
    if upper is None or resolution is None:
        return "-"
    fine = "" if measured_finely(upper, resolution) else ", not measured finely"
    return f"≤ {seconds_text(upper)} (resolution {seconds_text(resolution)}{fine})"


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)


def shown_as_sent(resource: str, entry: LedgerEntry, seen: Mapping[str, str]) -> str | None:
    """What the listing showed of ``entry`` if it is what was sent (its read-back hash);
    None when it is missing or different."""
    sent = readback_hash(projection(resource, entry.payload or {}))
    return sent if seen.get(entry.key) == sent else None


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
    #: visibility lag of each item confirmed in this run
    lags: list[VisibilityLag] = field(default_factory=list)
    #: seconds from acceptance to this run's confirmation, of each item confirmed
    confirmations: list[float] = field(default_factory=list)
    verifiable: bool = True
    #: items whose read-back failed (kept accepted for the next run), and why: message -> items
    unchecked: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def could_not_check(self, entries: int, errors: Sequence[str]) -> None:
        self.unchecked += entries
        for error in errors:
            self.failures[error] += 1

    def lag(self) -> dict[str, Any]:
        """Visibility lag of the items confirmed in this run, in seconds: the upper bounds'
        p50, p95 and max, the p95 of their resolutions, and whether that is fine enough to
        tell the lag (``measured_finely``)."""
        if not self.lags:
            return {"p50": None, "p95": None, "max": None, "resolution": None,
                    "measured_finely": None, "items": 0}
        upper = [lag.high for lag in self.lags]
        p95, resolution = _percentile(upper, 0.95), _percentile(
            [lag.resolution for lag in self.lags], 0.95)
        return {"p50": _percentile(upper, 0.5), "p95": p95, "max": round(max(upper), 3),
                "resolution": resolution, "measured_finely": measured_finely(p95, resolution),
                "items": len(self.lags)}

    def time_to_confirmation(self) -> dict[str, float | None]:
        """Seconds from acceptance to this run's confirmation: p50, p95, max."""
        if not self.confirmations:
            return {"p50": None, "p95": None, "max": None}
        return {"p50": _percentile(self.confirmations, 0.5),
                "p95": _percentile(self.confirmations, 0.95),
                "max": round(max(self.confirmations), 3)}


COUNTED = ("checked", "visible", "waiting", "resent", "parked", "deleted", "unchecked")


@dataclass
class ReconcileReport:
    source: str
    resources: dict[str, ResourceCheck] = field(default_factory=dict)
    #: what could not be checked beyond single read-backs (deletions, completeness), in words
    problems: list[str] = field(default_factory=list)
    #: events deleted for being older than ``reconciliation.keep_events_days``
    events_pruned: int = 0

    def totals(self) -> dict[str, int | float]:
        """Counts over every resource, and over every confirmed item the visibility lag
        (``visibility_lag_p50/p95/max``: upper bounds, ``visibility_lag_resolution``,
        ``visibility_lag_measured_finely``) and ``time_to_confirmation_p50/p95/max``;
        seconds, present when an item was confirmed."""
        total = ResourceCheck()
        for check in self.resources.values():
            for name in COUNTED:
                setattr(total, name, getattr(total, name) + getattr(check, name))
            total.lags += check.lags
            total.confirmations += check.confirmations
        lag = total.lag()
        figures: dict[str, int | float] = {name: getattr(total, name) for name in COUNTED}
        if self.events_pruned:
            figures["events_pruned"] = self.events_pruned
        if lag["items"]:
            figures |= {f"visibility_lag_{k}": lag[k]
                        for k in ("p50", "p95", "max", "resolution", "measured_finely")}
            figures |= {f"time_to_confirmation_{k}": v
                        for k, v in total.time_to_confirmation().items() if v is not None}
        return figures

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
                "visibility_lag_seconds": c.lag(),
                "time_to_confirmation_seconds": c.time_to_confirmation(),
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
            asked = self.clock()  # what a read does not show was not there by this time
            found = await self.reader.read_back(resource, entries)
            if not found.served:
                check.verifiable = False
                return check
            self._failed_pages = self._failed_pages + 1 if not found.read else 0
            if found.unread:
                check.could_not_check(len(found.unread), found.errors)
            if found.read:
                await self._settle(resource, found.read, found.seen, check, asked)

    async def _settle(self, resource: str, entries: list[LedgerEntry], seen: dict[str, str],
                      check: ResourceCheck, asked: datetime) -> None:
        now = self.clock()
        late: list[LedgerEntry] = []
        give_up: list[str] = []
        unseen: list[str] = []
        visible: dict[str, str] = {}  # key -> what it read back as, for later audits
        details: dict[str, dict[str, Any]] = {}  # key -> what its "visible" event tells
        for entry in entries:
            check.checked += 1
            shown = shown_as_sent(resource, entry, seen)
            if shown is not None:
                visible[entry.key] = shown
                if entry.accepted_at is not None:
                    # first seen: by the sync's probe if it saw it, else by this read-back
                    first_seen = entry.visible_at or now
                    lag = VisibilityLag.of(entry.accepted_at, first_seen, entry.unseen_at)
                    confirmation = round(_seconds(entry.accepted_at, now), 3)
                    check.lags.append(lag)
                    check.confirmations.append(confirmation)
                    details[entry.key] = {"first_seen": first_seen.isoformat(),
                                          "lag": [lag.low, lag.high],
                                          "time_to_confirmation": confirmation}
                continue
            unseen.append(entry.key)
            if entry.accepted_at is not None and now - entry.accepted_at < self.deadline:
                check.waiting += 1
            elif entry.resends >= self.max_resends:
                give_up.append(entry.key)
            else:
                late.append(entry)
        if visible:
            with self.state.transaction():
                self.state.mark(self.source, resource, list(visible), ItemStatus.VISIBLE,
                                at=now, details=details)
                self.state.keep_readbacks(self.source, resource, visible, at=now)
            check.visible += len(visible)
        if unseen:
            self.state.note_unseen(self.source, resource, unseen, asked)
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


class VisibilityProbe:
    """Reads the items a sync has just recorded as accepted back at growing intervals
    (``PROBE_FIRST`` s after, then each ``PROBE_RATIO`` times later), for at most ``seconds``,
    so that their visibility lag is known to within that ratio instead of to the interval
    between reconciliations.

    It runs beside the sync (an asyncio task per chunk) and only observes: what it sees is
    noted as first seen (``visible_at``, a ``seen`` event), what it does not as the last
    unseen check; confirming an item stays reconciliation's. A probe that fails stops
    quietly: it is a measurement, and the sync must not depend on it.
    """

    def __init__(self, *, source: str, state: StateStore, client: MarketingClient,
                 id_data_source: int | None, seconds: float, clock: Clock = wall_clock,
                 concurrency: int = 2) -> None:
        self.source = source
        self.state = state
        self.seconds = seconds
        self.clock = clock
        self.reader = Reader(client, id_data_source, concurrency)
        self._tasks: list[asyncio.Task[None]] = []

    def watch(self, resource: str, keys: Sequence[str]) -> None:
        """Start reading ``keys`` of ``resource`` back (call it right after recording them):
        up to ``PROBE_SAMPLE`` of them, spread over the chunk."""
        if self.seconds <= 0 or not keys:
            return
        sample = list(keys[:: max(1, len(keys) // PROBE_SAMPLE)][:PROBE_SAMPLE])
        self._tasks.append(asyncio.get_running_loop().create_task(self._watch(resource, sample)))

    async def finish(self) -> None:
        """Wait for the probes to end: each stops by its own bound (``seconds``)."""
        tasks, self._tasks = self._tasks, []
        await asyncio.gather(*tasks, return_exceptions=True)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    async def _watch(self, resource: str, keys: list[str]) -> None:
        start = self.clock()
        wait = PROBE_FIRST
        try:
            async with asyncio.timeout(self.seconds + PROBE_GRACE):
                while keys and wait <= self.seconds:
                    await asyncio.sleep(_seconds(self.clock(), start + timedelta(seconds=wait)))
                    wait *= PROBE_RATIO
                    keys = await self._look(resource, keys)
        except Exception as exc:  # noqa: BLE001 - a measurement: never the sync's failure
            log.info("visibility probe of %s %s stopped: %s", self.source, resource,
                     why(exc))

    async def _look(self, resource: str, keys: list[str]) -> list[str]:
        """Read ``keys`` back once; note what showed and what did not. Returns the keys to
        look for again."""
        entries = [e for e in self.state.ledger(self.source, resource, keys).values()
                   if e.status is ItemStatus.ACCEPTED and e.visible_at is None]
        if not entries:
            return []
        asked = self.clock()  # what the read does not show was not there by this time
        found = await self.reader.read_back(resource, entries)
        now = self.clock()  # what it shows was there by this time
        if not found.served:
            return []
        seen: dict[str, dict[str, Any]] = {}
        for entry in found.read:
            if shown_as_sent(resource, entry, found.seen) and entry.accepted_at is not None:
                lag = VisibilityLag.of(entry.accepted_at, now, entry.unseen_at)
                seen[entry.key] = {"lag": [lag.low, lag.high]}
        unseen = [e.key for e in found.read if e.key not in seen]
        self.state.note_seen(self.source, resource, seen, now)
        self.state.note_unseen(self.source, resource, unseen, asked)
        return unseen + [e.key for e in found.unread]
