"""One sync of one stream of one source: extract → map → validate → diff → push → record.

A run first makes its read plan (plan.py: incremental, full, or a backfill of a window of
change time), then executes it. A backfill re-sends every valid item of the window,
whatever the ledger says, and leaves the stream's cursor where it was.

Pages are read in position order and gathered into chunks; each chunk is mapped, checked
(gate.py), diffed against the ledger, pushed, and its outcomes recorded together with the
stream's cursor in one transaction. The cursor therefore never passes an item whose outcome
is not durably known: a crash anywhere, rerun, re-reads at most two chunks, and what the
ledger already holds as accepted with the same content is not sent again.

A chunk's push and record (its delivery, delivery.py) run while the next chunk is read,
mapped and checked: the API's answers are waited for with work to do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from functools import partial

from connectors.marketing.client import MarketingClient
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import Position, SourceConnector
from pipelines.engine.clock import Clock, wall_clock
from pipelines.engine.config import Source
from pipelines.engine.deletions import delete_records, stale_records
from pipelines.engine.delivery import Checked, InFlight, Pushed
from pipelines.engine.gate import (
    KnownProducts,
    check_quality,
    hashes_of,
    payload_of,
    problems,
    unchanged_left_out,
)
from pipelines.engine.limits import ledger_safe
from pipelines.engine.mapped_pages import Mapped, RecordMapper, mapped_pages, mapping_context
from pipelines.engine.mappings.base import MappedItem, Overrides, PlatformMapping
from pipelines.engine.plan import (
    KeyCheckpoint,
    ReadPlan,
    Window,
    key_checkpoint,
    plan_read,
    resume_of,
)
from pipelines.engine.probe import VisibilityProbe
from pipelines.engine.quality import HeldTally, Pool
from pipelines.engine.quality.check import plan_suite, suite_pending
from pipelines.engine.read_ahead import ReadAhead, Reading, read_ahead_limit
from pipelines.engine.read_process import ReadProcess
from pipelines.engine.send import send
from pipelines.engine.stages import StageTimer, counted, stage
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.stream_report import SAMPLES_PER_RESOURCE, StreamReport


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
        stages: StageTimer | None = None,
        prepare_quality: Callable[[], object] | None = None,
        read_process: ReadProcess | None = None,
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
        #: where the run's time goes, by stage (None: not measured)
        self.stages = stages
        #: starts planning the run's quality suites (``quality.check.prepare``, once per
        #: run), called when a chunk first has items to check (None: each suite is planned
        #: when first used)
        self.prepare_quality = prepare_quality
        #: where the stream's pages are read and mapped when not in this process
        self.read_process = read_process
        self._probe: VisibilityProbe | None = None
        #: the run's read-ahead and the stream being synced (``run``)
        self._ahead: ReadAhead | None = None
        self._stream = ""
        #: where the stream being synced gathers its pooled warnings (``quality.Pool``)
        self._pool = Pool(chunk_items)
        #: the chunk being pushed and recorded while the next one is checked
        self._in_flight = InFlight(stages)
        self.mapper = RecordMapper(mapping, Overrides(source.mapping),
                                   mapping_context(source, id_data_source))
        self.context = self.mapper.context
        self._known_products = KnownProducts(state, source.name, self.context.lang)

    def _wanted(self, resource: str) -> bool:
        return self.resources is None or resource in self.resources

    def plan(self, stream: str, window: Window | None = None) -> ReadPlan:
        """What a run of ``stream`` reads (fixed at its start)."""
        incremental = self.connector.streams()[stream].incremental
        at = (resume_of(partial(self.state.get_cursor, self.source.name), stream)
              if incremental and window is None else None)
        cursor = at if isinstance(at, Position) else None
        reads_by_key = getattr(self.connector, "reads_by_key", None)
        by_key = bool(incremental and window is None and cursor is None
                      and reads_by_key is not None and reads_by_key(stream))
        resume_key = at.at if by_key and isinstance(at, KeyCheckpoint) else None
        return plan_read(self.source, incremental=incremental, cursor=cursor,
                         clock=self.clock, window=window, by_key=by_key,
                         resume_key=resume_key)

    def reading(self, stream: str, window: Window | None = None) -> Reading[Mapped]:
        """The read of ``stream``: its plan, made now, and its pages, read and mapped from
        the first ``Reading.read`` on (in the read process, when the run has one)."""
        plan = self.plan(stream, window)
        if self.read_process is not None:
            process = self.read_process
            return Reading(stream, plan, lambda: process.pages(stream, plan))
        return Reading(stream, plan, lambda: mapped_pages(
            plan.pages(self.connector, stream), self.mapper, stream, plan,
            self.connector.position, self.stages))

    async def run(self, stream: str, *, window: Window | None = None, dry_run: bool = False,
                  ahead: ReadAhead[Mapped] | None = None) -> StreamReport:
        """Sync ``stream``; ``ahead``: the run's read-ahead, which may have read it already
        (None: one of its own, over this stream alone)."""
        report = StreamReport(self.source.name, stream, dry_run=dry_run)
        started = time.perf_counter()
        if ahead is None:
            ahead = ReadAhead([stream], lambda s: self.reading(s, window),
                              read_ahead_limit(self.chunk_items))
        self._ahead, self._stream = ahead, stream
        reading = ahead.reading(stream)
        plan = reading.plan
        lent = ahead.lent

        def seconds() -> float:
            """Its time: what it read of the next streams while it waited is theirs."""
            return time.perf_counter() - started - (ahead.lent - lent) + reading.early
        run_id = None
        if not dry_run:
            run_id = self.state.start_run(self.source.name, stream, plan.run_kind,
                                          window.start if window else None, plan.until)
            self._probe = self._new_probe()
        try:
            await self._execute(reading, report, dry_run)
        except BaseException as exc:
            if self._probe is not None:
                self._probe.cancel()
            report.seconds = seconds()
            if run_id is not None:  # not an Exception: cancelled, Ctrl-C — interrupted
                self.state.finish_run(run_id, "failed" if isinstance(exc, Exception)
                                      else "interrupted", report.totals(),
                                      error=str(exc) or type(exc).__name__)
            raise
        report.seconds = seconds()
        if run_id is not None:
            self.state.finish_run(run_id, "succeeded", report.totals())
        return report

    async def _execute(self, reading: Reading[Mapped], report: StreamReport, dry_run: bool) -> None:
        """Read what the plan says, chunk by chunk, then what reading it all tells."""
        stream, plan = reading.stream, reading.plan
        if not dry_run and not plan.resends_everything:
            await self._resend_unsettled(stream, report)
        chunk: list[MappedItem] = []
        last: Position | None = None
        #: the newest record a first read in key order read: its cursor once it ends
        newest: Position | None = None
        seen: set[str] | None = set() if plan.finds_deletions else None
        self._pool = Pool(self.chunk_items)
        # a read process opens the next stream itself (``read_process.OpenedAhead``)
        opens_next = self._ahead if self.read_process is None else None
        try:
            while True:
                with stage(self.stages, "read"):
                    page = await reading.next()
                    if opens_next is not None:  # the next stream's first page, read beside
                        opens_next.open_after(stream)
                        opens_next = None
                if page is None:
                    break
                with stage(self.stages, "map"):
                    for read in page:
                        if seen is not None:
                            seen.add(read.position.record_id)
                        if read.items is None:  # outside the plan
                            continue
                        report.records += 1
                        last = read.position
                        # the change time first: it settles most records without the
                        # ids' order (``Position.key``)
                        if plan.by_key and (newest is None or (
                                last.changed_at >= newest.changed_at and newest < last)):
                            newest = last
                        chunk += [m for m in read.items if self._pushed(m)]
                if len(chunk) >= self.chunk_items:
                    await self._flush(stream, chunk, plan, last, report, dry_run)
                    chunk = []
            # a first read in key order, read to its end: its last chunk moves the stream's
            # own cursor, to the newest record read, and later runs read on by change time
            await self._flush(stream, chunk, plan, last, report, dry_run, ends_at=newest)
            with stage(self.stages, "quality"):
                for judged in self._pool.drain():
                    report.quality.setdefault(judged.resource, []).append(judged)
            await self._in_flight.done()
            if plan.by_key and not dry_run:  # the cursor is set: the checkpoint is done with
                last = newest
                self.state.delete_cursor(self.source.name, key_checkpoint(stream))
        finally:
            self._in_flight.abandon()
        report.cursor = last
        if seen is not None:
            await self._delete_unseen(stream, seen, report, dry_run)
        if self._probe is not None:
            await self._probe.finish()

    def _pushed(self, mapped: MappedItem) -> bool:
        """Whether an item goes on: its resource is wanted, and so is its key when only
        some are (replaying rejected items)."""
        return self._wanted(mapped.resource) and (
            self.only_keys is None or mapped.key in self.only_keys.get(mapped.resource, ()))

    def _new_probe(self) -> VisibilityProbe | None:
        """What reads each chunk's accepted items back for ``tuning.probe_seconds`` (0: none),
        beside the sync, to measure their visibility lag finely."""
        seconds = self.source.tuning.probe_seconds
        if self.client is None or seconds <= 0:
            return None
        return VisibilityProbe(source=self.source.name, state=self.state, client=self.client,
                               id_data_source=self.context.id_data_source, seconds=seconds,
                               clock=self.clock)

    def _resources_in_order(self, stream: str, chunk: list[MappedItem]) -> list[str]:
        order = list(self.mapping.produces.get(stream, ()))
        return [r for r in order if any(m.resource == r for m in chunk)] + sorted(
            {m.resource for m in chunk} - set(order)
        )

    async def _flush(self, stream: str, chunk: list[MappedItem], plan: ReadPlan,
                     last: Position | None, report: StreamReport, dry_run: bool,
                     ends_at: Position | None = None) -> None:
        """Check and diff one chunk, then start its delivery (push, record, and the cursor
        past it when the plan advances it — to ``ends_at`` when given: the stream's cursor
        at the end of a first read in key order) once the chunk before it is pushed."""
        checked = [await self._check(resource, [m for m in chunk if m.resource == resource],
                                     report, dry_run, force=plan.resends_everything)
                   for resource in self._resources_in_order(stream, chunk)]
        await self._in_flight.ready()
        if dry_run:
            if self.progress is not None:
                self.progress(report)
            return
        checkpoint = plan.checkpoint(stream, last, ends_at=ends_at) if last is not None else None
        self._in_flight.start(self._push(checked, report),
                              partial(self._record_pushed, checkpoint, report), checked)

    async def _push(self, checked: list[Checked], report: StreamReport) -> Pushed:
        """Push each resource of a chunk in order; a failure stops the rest, and what was
        pushed before it is still recorded."""
        pushed = Pushed([])
        for resource in checked:
            try:
                with stage(self.stages, "push"):
                    sent = await self._send(resource.resource, resource.to_send,
                                            resource.hashes, report)
            except Exception as exc:  # noqa: BLE001 - the run's, once the rest is recorded
                pushed.failure = exc
                return pushed
            pushed.outcomes.append((resource.resource, [*resource.held, *sent]))
        return pushed

    async def _record_pushed(self, checkpoint: tuple[str, Position] | None,
                             report: StreamReport, pushed: Pushed) -> None:
        """Record what a chunk's push did, each resource in order; the cursor moves with the
        last (``checkpoint``: where it is kept, and to where), unless the push failed before
        the end (then the failure is raised)."""
        moved = checkpoint if pushed.failure is None else None
        for index, (resource, outcomes) in enumerate(pushed.outcomes):
            is_last = index == len(pushed.outcomes) - 1
            with stage(self.stages, "ledger"):
                await self._record(resource, outcomes, moved if is_last else None)
            if self._probe is not None:
                self._probe.watch(resource, [o.key for o in outcomes
                                             if o.status is ItemStatus.ACCEPTED])
        if pushed.failure is not None:
            raise pushed.failure
        if not pushed.outcomes and checkpoint is not None:
            with stage(self.stages, "ledger"):
                self.state.set_cursor(self.source.name, *checkpoint)
        if self.progress is not None:
            self.progress(report)

    async def _record(self, resource: str, outcomes: list[Outcome],
                      cursor: tuple[str, Position] | None) -> None:
        """Record a chunk's outcomes (and move the cursor) in a worker thread: the
        database's own work — SQLite's inserts, its commit and checkpoints, half of what
        recording costs — holds no GIL there, so it runs beside the next chunk's push and
        checks on the event loop (unless the store's calls share one connection)."""
        record = partial(self.state.record, self.source.name, resource, outcomes,
                         cursor=cursor)
        if self.state.parallel_safe:
            await asyncio.to_thread(counted, self.stages, "ledger", record)
        else:
            record()

    async def _check(
        self, resource: str, items: list[MappedItem], report: StreamReport, dry_run: bool,
        force: bool = False,
    ) -> Checked:
        """Diff one resource of a chunk against the ledger, check what changed (bounds,
        model, quality) and say what to send; a dry run counts it as pushed."""
        model = SYNC_RESOURCES[resource].model
        latest: dict[str, MappedItem] = {}
        for mapped in items:  # the same item may come twice in a chunk (a carrier per order)
            latest[mapped.key] = mapped
        report.add(resource, "extracted", len(latest))
        #: items that cannot even be hashed, with the reason (held back below)
        unwritable: dict[str, str] = {}
        with stage(self.stages, "diff"):
            hashes = hashes_of(latest, unwritable)
        with stage(self.stages, "ledger"):
            known = {} if force else self.state.states(self.source.name, resource, list(latest))
        if not force:  # what the chunk in flight will record, until the ledger has it
            known.update(self._in_flight.pending(resource, set(latest)))
        with stage(self.stages, "diff"):
            changed = unchanged_left_out(resource, latest, hashes, known, report)
        if changed and self.prepare_quality is not None:
            self.prepare_quality()
        held: list[Outcome] = []
        to_send: list[MappedItem] = []
        #: why items are held back before the quality suite, for the run's quality report
        tally = HeldTally(resource)
        with stage(self.stages, "validate"):
            for mapped in changed:
                key = mapped.key
                reasons = problems(model, mapped, unwritable.get(key))
                if reasons is not None:
                    report.add(resource, "quarantined")
                    tally.add(key, reasons)
                    held.append(Outcome(key, hashes[key], ItemStatus.QUARANTINED,
                                        mapped.source_record_id, reasons.reasons,
                                        ledger_safe(mapped.item), mapped.changed_at))
                    continue
                to_send.append(mapped)
        if to_send:
            await self._await_suite(resource)
        with stage(self.stages, "quality"):
            to_send = check_quality(resource, to_send, hashes, held, report, tally,
                                    self._known_products, self._pool)
        if (held_report := tally.report()) is not None:
            report.quality.setdefault(resource, []).append(held_report)
        if dry_run:
            report.add(resource, "pushed", len(to_send))
            samples = report.samples.setdefault(resource, [])
            samples.extend(m.item for m in to_send[: SAMPLES_PER_RESOURCE - len(samples)])
        return Checked(resource, held, to_send, hashes)

    async def _await_suite(self, resource: str) -> None:
        """Until the quality suite of ``resource`` is planned (the great-expectations
        import, at a process's first run), read ahead rather than stall."""
        while suite_pending(resource):
            with stage(self.stages, "read"):
                read = self._ahead is not None and await self._ahead.step(self._stream)
            if not read:  # nothing left to read ahead: wait for the plan, off the loop
                with stage(self.stages, "gx wait"):
                    await asyncio.to_thread(plan_suite, resource)

    async def _send(self, resource: str, to_send: list[MappedItem], hashes: dict[str, str],
                    report: StreamReport) -> list[Outcome]:
        if not to_send:
            return []
        assert self.client is not None
        tuning = self.source.tuning
        # kept until reconciliation sees the item, to send again if it never shows
        pending = {m.key: Outcome(m.key, hashes.get(m.key, ""), ItemStatus.ACCEPTED,
                                  m.source_record_id, (), payload_of(m), m.changed_at)
                   for m in to_send}
        report.add(resource, "pushed", len(to_send))
        return await send(self.client, resource, pending, concurrency=tuning.concurrency,
                          min_concurrency=tuning.min_concurrency,
                          max_concurrency=tuning.max_concurrency,
                          on_status=lambda status, n: report.add(resource, status, n))

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
                with stage(self.stages, "push"):
                    outcomes = await self._send(
                        resource, items, {e.key: e.content_hash for e in retry}, report
                    )
                with stage(self.stages, "ledger"):
                    self.state.record(self.source.name, resource, outcomes)
