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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from connectors.marketing.client import MarketingClient
from pipelines.engine.clock import Clock, wall_clock
from pipelines.engine.lag import (
    VisibilityLag,
    measured_finely,
    percentile,
    seconds_between,
)
from pipelines.engine.read_back import PAGE, Reader, shown_as_sent
from pipelines.engine.send import send
from pipelines.engine.state import ItemStatus, LedgerEntry, Outcome, StateStore

#: pages in a row whose every read failed, after which the destination is taken to be down
FAILING_PAGES = 2


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
        p95, resolution = percentile(upper, 0.95), percentile(
            [lag.resolution for lag in self.lags], 0.95)
        return {"p50": percentile(upper, 0.5), "p95": p95, "max": round(max(upper), 3),
                "resolution": resolution, "measured_finely": measured_finely(p95, resolution),
                "items": len(self.lags)}

    def time_to_confirmation(self) -> dict[str, float | None]:
        """Seconds from acceptance to this run's confirmation: p50, p95, max."""
        if not self.confirmations:
            return {"p50": None, "p95": None, "max": None}
        return {"p50": percentile(self.confirmations, 0.5),
                "p95": percentile(self.confirmations, 0.95),
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
                    confirmation = round(seconds_between(entry.accepted_at, now), 3)
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
        pending = {e.key: Outcome(e.key, e.content_hash, ItemStatus.ACCEPTED,
                                  e.source_record_id, (), e.payload)
                   for e in entries if e.payload}
        outcomes = await send(self.client, resource, pending, concurrency=self.concurrency)
        self.state.record(self.source, resource, outcomes)
        self.state.count_resend(self.source, resource, list(pending))
        check.resent += len(pending)
