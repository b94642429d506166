"""One sync of one stream of one source: extract → map → validate → diff → push → record.

A backfill (a window of change time) re-sends every valid item of the window, whatever
the ledger says, and leaves the stream's cursor where it was.

Pages are read in position order and gathered into chunks; each chunk is mapped, checked,
diffed against the ledger, pushed, and its outcomes recorded together with the stream's
cursor in one transaction. The cursor therefore never passes an item whose outcome is not
durably known: a crash anywhere, rerun, re-reads at most one chunk, and what the ledger
already holds as accepted with the same content is not sent again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from connectors.marketing.client import MarketingClient
from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.writer import BulkWriter, ItemOutcome
from connectors.sources.base import Position, RawRecord, SourceConnector
from pipelines.engine.config import Source
from pipelines.engine.deletions import delete_records, stale_records
from pipelines.engine.diff import content_hash
from pipelines.engine.limits import item_bounds, ledger_safe
from pipelines.engine.mappings.base import (
    MappedItem,
    MappingContext,
    Overrides,
    PlatformMapping,
    map_record,
)
from pipelines.engine.quality import (
    Held,
    HeldTally,
    QualityReport,
    QualityUnavailable,
    check_items,
)
from pipelines.engine.quality import held as holds
from pipelines.engine.state import ItemStatus, Outcome, StateStore

if TYPE_CHECKING:
    from pipelines.engine.reconcile import VisibilityProbe

#: ledger states whose content the API already has
SETTLED = frozenset({ItemStatus.ACCEPTED, ItemStatus.VISIBLE})
#: held back until the source changes the item: invalid, or refused too often
HELD = frozenset({ItemStatus.QUARANTINED, ItemStatus.PARKED})
COUNTS = ("extracted", "quarantined", "unchanged", "pushed", "accepted", "rejected", "failed",
          "deleted", "parked")
SAMPLES_PER_RESOURCE = 3
#: how far behind "now" an incremental read stops: a record written later in the same second
#: as the last one read would otherwise sort before the cursor and never be read
SETTLE = timedelta(seconds=2)

#: the engine's "now" (aware, UTC): the settle margin, deadlines and recent windows are
#: measured on it, so a test moves time forward instead of waiting for it
Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """Every engine clock's default: the wall clock, in UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class Window:
    """A time window of change times, for backfills: it does not move the stream's cursor."""

    start: datetime
    end: datetime


@dataclass
class StreamReport:
    """What one run of a stream did, per target resource."""

    source: str
    stream: str
    dry_run: bool = False
    records: int = 0
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cursor: Position | None = None
    seconds: float = 0.0
    #: resource -> the quality report of each chunk that had items to check
    quality: dict[str, list[QualityReport]] = field(default_factory=dict)

    def add(self, resource: str, what: str, n: int = 1) -> None:
        self.counts.setdefault(resource, Counter())[what] += n

    def total(self, what: str) -> int:
        return sum(c[what] for c in self.counts.values())

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0


def why(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line for a reason: its type and the start of its message
    (a message may quote a whole value)."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= limit else text[:limit] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def ledger_key(key: Hashable) -> str:
    """The ledger's text form of a writer key (a value, or a tuple for composite keys)."""
    return "|".join(map(str, key)) if isinstance(key, tuple) else str(key)


class StreamSync:
    """Runs one stream of one source into the API (or, with ``client=None``, a dry run)."""

    def __init__(
        self,
        *,
        source: Source,
        connector: SourceConnector,
        mapping: PlatformMapping,
        state: StateStore,
        client: MarketingClient | None,
        id_data_source: int | None,
        resources: Iterable[str] | None = None,
        chunk_items: int = 2000,
        progress: Callable[[StreamReport], None] | None = None,
        only_keys: dict[str, set[str]] | None = None,
        clock: Clock = wall_clock,
    ) -> None:
        self.source = source
        self.connector = connector
        self.mapping = mapping
        self.state = state
        self.client = client
        self.resources = set(resources) if resources is not None else None
        self.chunk_items = chunk_items
        self.progress = progress
        #: resource -> the only item keys to push (replaying rejected items)
        self.only_keys = only_keys
        self.clock = clock
        self.overrides = Overrides(source.mapping)
        self._window: Window | None = None
        #: product ids the ledger holds as sent, and the product keys already looked up
        self._products_known: set[str] = set()
        self._products_looked_up: set[str] = set()
        self._probe: VisibilityProbe | None = None
        self.context = MappingContext(
            # sources read from a database or files have no shop address
            shop_url=source.connection.url or "",
            lang=source.lang,
            currency=source.currency,
            id_data_source=id_data_source,
        )

    def _wanted(self, resource: str) -> bool:
        return self.resources is None or resource in self.resources

    def _start(self, stream: str, window: Window | None) -> tuple[Position | None, datetime]:
        """Where to read from and up to when (fixed at the start of the run)."""
        # a second the shop may still write to must not be passed: stop a little short of now
        until = window.end if window else self.clock() - SETTLE
        if window is not None:
            return Position(window.start - timedelta(microseconds=1)), until
        if not self.connector.streams()[stream].incremental:
            return None, until
        cursor = self.state.get_cursor(self.source.name, stream)
        if cursor is None:
            start = self.source.history_start
            if start is None:
                return None, until
            return Position(datetime(start.year, start.month, start.day, tzinfo=UTC)), until
        lookback = timedelta(seconds=self.source.lookback_seconds)
        return (Position(cursor.changed_at - lookback) if lookback else cursor), until

    async def run(self, stream: str, *, window: Window | None = None, dry_run: bool = False) -> StreamReport:
        report = StreamReport(self.source.name, stream, dry_run=dry_run)
        self._window = window
        started = time.perf_counter()
        after, until = self._start(stream, window)
        incremental = self.connector.streams()[stream].incremental
        run_id = None
        if not dry_run:
            run_id = self.state.start_run(
                self.source.name, stream, "backfill" if window else "sync",
                window.start if window else None, until,
            )
            self._probe = self._new_probe()
        try:
            if not dry_run and window is None:  # a window maps everything afresh anyway
                await self._resend_unsettled(stream, report)
            chunk: list[MappedItem] = []
            last: Position | None = None
            #: a full read tells what is gone: every record not seen in it
            seen: set[str] | None = set() if not incremental and window is None else None
            async for page in self.connector.read(stream, after=after, until=until):
                for record in page:
                    position = self.connector.position(stream, record)
                    if seen is not None:
                        seen.add(position.record_id)
                    if window is not None and not incremental and not (
                        window.start <= position.changed_at < window.end
                    ):
                        continue  # a full stream is read whole; a backfill keeps its window
                    report.records += 1
                    last = position
                    for mapped in self._map(stream, record, position):
                        if self._wanted(mapped.resource) and (
                            self.only_keys is None
                            or mapped.key in self.only_keys.get(mapped.resource, ())
                        ):
                            chunk.append(mapped)
                if len(chunk) >= self.chunk_items:
                    await self._flush(stream, chunk, last if incremental and not window else None,
                                      report, dry_run)
                    chunk = []
            await self._flush(stream, chunk, last if incremental and not window else None,
                              report, dry_run)
            report.cursor = last
            if seen is not None:
                await self._delete_unseen(stream, seen, report, dry_run)
            if self._probe is not None:
                await self._probe.finish()
        except BaseException as exc:
            if self._probe is not None:
                self._probe.cancel()
            report.seconds = time.perf_counter() - started
            if run_id is not None:  # not an Exception: cancelled, Ctrl-C — interrupted
                self.state.finish_run(run_id, "failed" if isinstance(exc, Exception)
                                      else "interrupted", self._totals(report),
                                      error=str(exc) or type(exc).__name__)
            raise
        report.seconds = time.perf_counter() - started
        if run_id is not None:
            self.state.finish_run(run_id, "succeeded", self._totals(report))
        return report

    def _new_probe(self) -> VisibilityProbe | None:
        """What reads each chunk's accepted items back for ``tuning.probe_seconds`` (0: none),
        beside the sync, to measure their visibility lag finely."""
        seconds = self.source.tuning.probe_seconds
        if self.client is None or seconds <= 0:
            return None
        from pipelines.engine.reconcile import VisibilityProbe  # it builds on this module

        return VisibilityProbe(source=self.source.name, state=self.state, client=self.client,
                               id_data_source=self.context.id_data_source, seconds=seconds,
                               clock=self.clock)

    def _map(self, stream: str, record: RawRecord, position: Position) -> list[MappedItem]:
        """The items of one record. A record the mapping (or an override) cannot map is
        one item held back in its stream's first resource, keyed by the record's id as the
        source gave it, with the reason: the rest of the stream flows on."""
        try:
            return list(map_record(self.mapping, self.overrides, stream, record, self.context,
                                   position.record_id, position.changed_at))
        except Exception as exc:  # noqa: BLE001 - whatever one record does, it is its own
            origin = record.get("_origin") if isinstance(record.get("_origin"), str) else None
            where = origin or f"{stream} record {position.record_id!r}"
            # held back as what the record is (an order, not the carriers its lines name)
            produced = self.mapping.produces.get(stream, ())
            resource = stream if stream in produced else next(iter(produced), stream)
            reason = f"{where}{holds.CANNOT_MAP}{why(exc)}"
            item = {"_errors": [reason], "_record": ledger_safe(record)}
            return [MappedItem(resource, position.record_id or where, item,
                               position.record_id, position.changed_at)]

    @staticmethod
    def _totals(report: StreamReport) -> dict[str, int | float]:
        totals: dict[str, int | float] = {what: report.total(what) for what in COUNTS}
        totals["records"] = report.records
        totals["seconds"] = round(report.seconds, 3)
        return totals

    def _resources_in_order(self, stream: str, chunk: list[MappedItem]) -> list[str]:
        order = list(self.mapping.produces.get(stream, ()))
        return [r for r in order if any(m.resource == r for m in chunk)] + sorted(
            {m.resource for m in chunk} - set(order)
        )

    async def _flush(
        self,
        stream: str,
        chunk: list[MappedItem],
        cursor: Position | None,
        report: StreamReport,
        dry_run: bool,
    ) -> None:
        """Check, diff, push and record one chunk; then move the cursor past it."""
        resources = self._resources_in_order(stream, chunk)
        for index, resource in enumerate(resources):
            items = [m for m in chunk if m.resource == resource]
            outcomes = await self._push_resource(resource, items, report, dry_run,
                                                 force=self._window is not None)
            if not dry_run:
                is_last = index == len(resources) - 1
                self.state.record(
                    self.source.name, resource, outcomes,
                    cursor=(stream, cursor) if is_last and cursor is not None else None,
                )
                if self._probe is not None:
                    self._probe.watch(resource, [o.key for o in outcomes
                                                 if o.status is ItemStatus.ACCEPTED])
        if not resources and cursor is not None and not dry_run:
            self.state.set_cursor(self.source.name, stream, cursor)
        if self.progress is not None:
            self.progress(report)

    async def _push_resource(
        self, resource: str, items: list[MappedItem], report: StreamReport, dry_run: bool,
        force: bool = False,
    ) -> list[Outcome]:
        model = SYNC_RESOURCES[resource].model
        latest: dict[str, MappedItem] = {}
        for mapped in items:  # the same item may come twice in a chunk (a carrier per order)
            latest[mapped.key] = mapped
        report.add(resource, "extracted", len(latest))
        #: items that cannot even be hashed, with the reason (held back below)
        unwritable: dict[str, str] = {}
        hashes = {key: self._hash(m, unwritable) for key, m in latest.items()}
        known = self.state.ledger(self.source.name, resource, list(latest))
        outcomes: list[Outcome] = []
        to_send: list[MappedItem] = []
        #: why items are held back before the quality suite, for the run's quality report
        tally = HeldTally(resource)
        for key, mapped in latest.items():
            entry = None if force else known.get(key)
            if entry is not None and entry.content_hash == hashes[key] and (
                entry.status in SETTLED or entry.status in HELD
            ):
                report.add(resource, "unchanged" if entry.status in SETTLED
                           else entry.status.value)
                continue
            held = self._problems(model, mapped, unwritable.get(key))
            if held is not None:
                report.add(resource, "quarantined")
                tally.add(key, held)
                outcomes.append(Outcome(key, hashes[key], ItemStatus.QUARANTINED,
                                        mapped.source_record_id, held.reasons,
                                        ledger_safe(mapped.item), mapped.changed_at))
                continue
            to_send.append(mapped)
        to_send = self._check_quality(resource, to_send, hashes, outcomes, report, tally)
        if (held_report := tally.report()) is not None:
            report.quality.setdefault(resource, []).append(held_report)
        if dry_run:
            report.add(resource, "pushed", len(to_send))
            samples = report.samples.setdefault(resource, [])
            samples.extend(m.item for m in to_send[: SAMPLES_PER_RESOURCE - len(samples)])
            return outcomes
        outcomes.extend(await self._send(resource, to_send, hashes, report))
        return outcomes

    @staticmethod
    def _hash(mapped: MappedItem, unwritable: dict[str, str]) -> str:
        """The item's content hash; for an item JSON cannot hold (an integer past 64 bits,
        nesting past orjson's limit), the hash of what the ledger keeps of it, and the
        reason in ``unwritable``."""
        try:
            return content_hash(mapped.item)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            unwritable[mapped.key] = f"the item cannot be written as JSON: {why(exc)}"
            return content_hash(ledger_safe(mapped.item))

    @staticmethod
    def _problems(model: type[BaseModel], mapped: MappedItem, unwritable: str | None
                  ) -> Held | None:
        """Why the item is held back, and by which stage's rules (None: it may be sent). A
        connector that could not read a record, or a mapping that failed, says why; then
        the bounds (limits.py), then the item model."""
        if reasons := [str(r) for r in mapped.item.get("_errors") or ()]:
            return holds.carried_errors(reasons, model.model_fields)
        if bounds := item_bounds(mapped.item):
            return holds.bounds_broken(bounds)
        if unwritable is not None:
            return holds.unwritable(unwritable)
        try:
            reasons = validate_item(model, mapped.item)
        except Exception as exc:  # noqa: BLE001 - a validator that breaks holds one item back
            reasons = [f"item: cannot be validated: {why(exc)}"]
        return holds.model_refused(reasons) if reasons else None

    def _check_quality(
        self,
        resource: str,
        items: list[MappedItem],
        hashes: dict[str, str],
        outcomes: list[Outcome],
        report: StreamReport,
        tally: HeldTally,
    ) -> list[MappedItem]:
        """Run the resource's quality suite; quarantine the items breaking a blocking rule
        (with the rules' names as reasons) and return the others. An item the suite cannot
        run on is held back too, and counted in ``tally``."""
        if not items:
            return items
        known = self._known_products(items)
        failures: dict[str, list[str]] = {}
        try:
            quality = check_items(resource, [(m.key, m.item) for m in items],
                                  known=known, after_models=True)
            report.quality.setdefault(resource, []).append(quality)
            failures = {key: quality.reasons(key) for key in quality.failures}
        except QualityUnavailable:  # the checks' process, not an item: the sync stops
            raise
        except Exception:  # noqa: BLE001 - one odd item must not fail the chunk: find it
            for mapped in items:
                try:
                    single = check_items(resource, [(mapped.key, mapped.item)], known=known,
                                         after_models=True)
                except Exception as exc:  # noqa: BLE001
                    crashed = holds.suite_crashed(f"quality: the checks cannot run on this"
                                                  f" item: {why(exc)}")
                    tally.add(mapped.key, crashed)
                    failures[mapped.key] = crashed.reasons
                    continue
                report.quality.setdefault(resource, []).append(single)
                if mapped.key in single.failures:
                    failures[mapped.key] = single.reasons(mapped.key)
        if not failures:
            return items
        kept = []
        for mapped in items:
            if mapped.key in failures:
                report.add(resource, "quarantined")
                outcomes.append(Outcome(mapped.key, hashes[mapped.key], ItemStatus.QUARANTINED,
                                        mapped.source_record_id, failures[mapped.key],
                                        mapped.item, mapped.changed_at))
            else:
                kept.append(mapped)
        return kept

    def _known_products(self, items: list[MappedItem]) -> dict[str, set[str]] | None:
        """The ids of the products the items' lines refer to that the ledger holds as sent
        (for the "lines refer to known products" rule); None for items without lines. Each
        product key is looked up once per run."""
        wanted: set[str] = set()
        for mapped in items:
            lines = mapped.item.get("products")
            if not isinstance(lines, list):
                continue
            langs = {mapped.item.get("lang") or self.context.lang, self.context.lang}
            wanted.update(f"{line.get('product_id')}|{lang}" for line in lines
                          if isinstance(line, dict) for lang in langs)
        if not wanted:
            return None
        if missing := wanted - self._products_looked_up:
            found = self.state.ledger(self.source.name, "products", sorted(missing))
            self._products_known.update(key.split("|", 1)[0] for key, entry in found.items()
                                        if entry.status in SETTLED)
            self._products_looked_up |= missing
        return {"products": self._products_known}

    async def _send(
        self,
        resource: str,
        to_send: list[MappedItem],
        hashes: dict[str, str],
        report: StreamReport,
    ) -> list[Outcome]:
        if not to_send:
            return []
        assert self.client is not None
        by_key = {m.key: m for m in to_send}
        tuning = self.source.tuning
        writer = BulkWriter(self.client, resource, concurrency=tuning.concurrency,
                            min_concurrency=min(tuning.min_concurrency, tuning.concurrency))
        outcomes: list[Outcome] = []

        def collect(outcome: ItemOutcome) -> None:
            key = ledger_key(outcome.key)
            mapped = by_key.get(key)
            report.add(resource, outcome.status)
            outcomes.append(Outcome(
                key,
                hashes.get(key, ""),
                ItemStatus(outcome.status),
                mapped.source_record_id if mapped else None,
                list(outcome.errors),
                # kept until reconciliation sees the item, to send again if it never shows
                mapped.item if mapped else dict(outcome.item or {}),
                mapped.changed_at if mapped else None,
            ))

        report.add(resource, "pushed", len(to_send))
        await writer.write_all((m.item for m in to_send), on_outcome=collect)
        return outcomes

    async def _delete_unseen(self, stream: str, seen: set[str], report: StreamReport,
                             dry_run: bool) -> None:
        resources = [r for r in self.mapping.produces.get(stream, ()) if self._wanted(r)]
        gone = stale_records(self.state, self.source.name, resources, seen)
        deleted = await delete_records(
            state=self.state, client=None if dry_run else self.client,
            source=self.source.name, resources=resources, record_ids=gone,
        )
        for resource, n in deleted.items():
            report.add(resource, "deleted", n)

    async def _resend_unsettled(self, stream: str, report: StreamReport) -> None:
        """Before reading: items that failed transiently are sent again, and rejected ones
        too until they have been tried ``max_rejected_attempts`` times; then they are parked
        for a person (``shopsync rejections``) rather than retried forever."""
        limit = self.source.tuning.max_rejected_attempts
        for resource in self.mapping.produces.get(stream, ()):
            if not self._wanted(resource):
                continue
            entries = self.state.entries(
                self.source.name, resource, {ItemStatus.FAILED, ItemStatus.REJECTED}
            )
            worn = [e.key for e in entries
                    if e.status == ItemStatus.REJECTED and e.attempts >= limit]
            if worn:
                self.state.mark(self.source.name, resource, worn, ItemStatus.PARKED)
                report.add(resource, "parked", len(worn))
            retry = [e for e in entries if e.payload and e.key not in set(worn)]
            items = [MappedItem(resource, e.key, e.payload, e.source_record_id or "")
                     for e in retry if e.payload]
            if items:
                outcomes = await self._send(
                    resource, items, {e.key: e.content_hash for e in retry}, report
                )
                self.state.record(self.source.name, resource, outcomes)
