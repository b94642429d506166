"""Running a source: open its connector and the API client from the configuration, resolve
its data source, and sync its streams in dependency order (reference data first)."""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from connectors.http.breaker import CircuitBreaker
from connectors.http.pacing import Pacing
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import DestinationDown, MarketingApiError
from connectors.marketing.references import stream_order
from connectors.sources.base import SourceConnector, SourceError
from pipelines.engine.budgets import destination_pacer, shop_pacer
from pipelines.engine.clock import Clock, wall_clock
from pipelines.engine.collector import paced_for_sync
from pipelines.engine.completeness import (
    StreamCompleteness,
    completeness,
    completeness_in_window,
)
from pipelines.engine.config import Config, ConfigError, Source
from pipelines.engine.deletions import (
    delete_records,
    present_ids,
    reported_deletions,
    stale_records,
)
from pipelines.engine.destination import resolve_data_source
from pipelines.engine.mappings import mapping_for
from pipelines.engine.plan import SETTLE, Window, resume_of
from pipelines.engine.platforms import platform
from pipelines.engine.quality.check import prepare
from pipelines.engine.read_ahead import ReadAhead, read_ahead_limit
from pipelines.engine.read_process import ReadProcess, ReadSpec
from pipelines.engine.reconcile import Reconciler, ReconcileReport
from pipelines.engine.secrets import secret_from
from pipelines.engine.stages import StageTimer
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.stopped import Resume, SyncStopped
from pipelines.engine.stream_report import StreamReport
from pipelines.engine.sync import StreamSync

Env = Mapping[str, str]


def open_connector(source: Source, env: Env, pacer: Pacing | None = None) -> SourceConnector:
    """The platform connector of ``source``, with its credentials from the environment;
    ``pacer``: the shop's budget shared across processes (``budgets.shop_pacer``)."""
    return platform(source.platform).open_connector(source, env, pacer=pacer)


def open_client(config: Config, source: Source, env: Env, clock: Clock = wall_clock,
                pacer: Pacing | None = None) -> MarketingClient:
    """The API client of ``source``'s destination (``config.destination_for``), with a
    circuit breaker for its whole life (one run): down after
    ``destination.down_after_seconds`` of failures, on ``clock``; ``pacer``: its key's budget
    shared across processes (``budgets.destination_pacer``)."""
    destination = config.destination_for(source)
    key = secret_from(env, destination.api_key_env,
                      config.destination_field(source, "api_key_env"))
    kpi_key = (
        secret_from(env, destination.kpi_api_key_env,
                    config.destination_field(source, "kpi_api_key_env"))
        if destination.kpi_api_key_env
        else None
    )
    breaker = CircuitBreaker(destination.down_after_seconds, server=destination.base_url,
                             clock=clock)
    return MarketingClient(destination.base_url, key, kpi_api_key=kpi_key, breaker=breaker,
                           pacer=pacer)


def selected_resources(source: Source, write_carts: bool = True) -> dict[str, list[str]]:
    """stream -> the configured target resources it feeds (carts only where the destination
    takes cart writes), in the order they are synced: reference data first, as the table
    of who refers to whom (``connectors/marketing/references.py``) has it."""
    produces = stream_order(platform(source.platform).produces(source))
    known = {r for resources in produces.values() for r in resources}
    wanted = set(known) if "all" in source.resources else set(source.resources)
    unknown = sorted(wanted - known)
    if unknown:
        why = platform(source.platform).unsupported()
        raise ConfigError([
            f"sources.{source.name}.resources: {name} cannot be synced from {source.platform}"
            + (f": {why[name]}" if name in why else "")
            + f" — choose among {', '.join(sorted(known))} (or `all`)"
            for name in unknown
        ])
    if not write_carts:
        wanted.discard("carts")
    plan = {
        stream: [r for r in resources if r in wanted]
        for stream, resources in produces.items()
    }
    return {stream: resources for stream, resources in plan.items() if resources}


@dataclass
class SourceRunner:
    """Syncs one configured source; ``env`` provides the secrets, ``clock`` the time its
    syncs read up to and its reconciliations measure deadlines on."""

    config: Config
    source: Source
    state: StateStore
    env: Env = field(default_factory=lambda: os.environ)
    clock: Clock = wall_clock
    #: seconds a run waits for another run of the source to end (``lease``), 0: refused at
    #: once; and what is told when it begins to wait
    lease_wait: float = 0
    on_lease_wait: Callable[[str], None] | None = None
    #: where its stream runs' time goes, by stage (``bench/sync.py``); None: not measured
    stages: StageTimer | None = None
    #: the streams its connector reads whole each run (no cursor), once a run has opened it
    read_whole: set[str] = field(default_factory=set, init=False, repr=False)

    @classmethod
    def for_source(cls, config: Config, name: str, state: StateStore | None = None,
                   env: Env | None = None) -> SourceRunner:
        env = env if env is not None else os.environ
        return cls(config, config.source(name),
                   state or StateStore(config.state_url_in(env) or StateStore.default_url()),
                   env)

    def plan(self) -> dict[str, list[str]]:
        return selected_resources(self.source,
                                  self.config.destination_for(self.source).write_carts)

    def open_connector(self) -> SourceConnector:
        """The source's connector, paced by its shop's shared budget when it has one."""
        return open_connector(self.source, self.env, shop_pacer(self.state, self.source))

    def open_client(self) -> MarketingClient:
        """The destination's client, paced by its key's shared budget when it has one."""
        destination = self.config.destination_for(self.source)
        return open_client(self.config, self.source, self.env, self.clock,
                           destination_pacer(self.state, destination))

    async def run(
        self,
        streams: Sequence[str] | None = None,
        *,
        window: Window | None = None,
        dry_run: bool = False,
        only: set[str] | None = None,
        progress: Callable[[StreamReport], None] | None = None,
        only_keys: dict[str, set[str]] | None = None,
    ) -> list[StreamReport]:
        """Sync ``streams`` (default: all planned), limited to the resources in ``only``.

        Raises:
            SourceBusy: another run of the source holds it (``lease``); nothing was done.
            SyncStopped: the destination was down (every request failed for
                ``destination.down_after_seconds``): the stream stopped reading, what was
                recorded stays, and the message says where the next run resumes.
        """
        mapping = mapping_for(self.source.platform)
        plan = self.plan()
        if only is not None:
            plan = {s: [r for r in rs if r in only] for s, rs in plan.items()}
            plan = {s: rs for s, rs in plan.items() if rs}
        if streams is not None:
            unknown = sorted(set(streams) - set(plan))
            if unknown:
                raise ConfigError([(f"no stream {', '.join(unknown)} for source {self.source.name};"
                                    f" its streams: {', '.join(plan)}")])
            plan = {s: r for s, r in plan.items() if s in streams}
        reports = []
        # GX imports, in a thread, once a stream has items to check (every step's suites at
        # the first step of a run), while the run reads on: a run that finds nothing changed
        # never pays for it
        prepare_quality = functools.cache(
            lambda: prepare([r for rs in self.plan().values() for r in rs]))
        async with AsyncExitStack() as stack:
            stack.enter_context(paced_for_sync())
            if not dry_run:  # a dry run writes nothing: no lease; entered first, released last
                stack.enter_context(self.lease("backfill" if window else "sync"))
            if not dry_run and window is None and not self.state.recent_runs(self.source.name, 1):
                # a source's first sync sends everything: the import starts now, beside the
                # data source's look-up, the connector's opening and the read process's
                # start, and no stream waits for it
                prepare_quality()
            connector = self.open_connector()
            stack.push_async_callback(connector.aclose)
            self.read_whole = {s for s, spec in connector.streams().items() if not spec.incremental}
            client = self.open_client()
            stack.push_async_callback(client.aclose)
            stream: str | None = None
            try:
                id_data_source = await resolve_data_source(
                    client, self.source.data_source, create=not dry_run
                )
                read_process = None
                if self.source.tuning.read_process:
                    # the state database goes along when the shop's budget is shared there
                    budget = shop_pacer(self.state, self.source)
                    read_process = ReadProcess(ReadSpec(
                        self.source, dict(self.env), id_data_source,
                        self.state.url if budget is not None else None), self.stages)
                    stack.push_async_callback(read_process.aclose)
                syncs = {stream: StreamSync(
                    source=self.source,
                    connector=connector,
                    mapping=mapping,
                    state=self.state,
                    client=None if dry_run else client,
                    id_data_source=id_data_source,
                    resources=resources,
                    chunk_items=self.source.tuning.chunk_items,
                    progress=progress,
                    only_keys=only_keys,
                    clock=self.clock,
                    stages=self.stages,
                    prepare_quality=prepare_quality,
                    read_process=read_process,
                ) for stream, resources in plan.items()}
                # what a stream waiting for its quality suite reads ahead: itself, the next
                ahead = ReadAhead(list(syncs), lambda s: syncs[s].reading(s, window),
                                  read_ahead_limit(self.source.tuning.chunk_items))
                stack.push_async_callback(ahead.aclose)
                if read_process is not None:
                    read_process.then = ahead.following
                for stream, sync in syncs.items():
                    reports.append(await sync.run(stream, window=window, dry_run=dry_run,
                                                  ahead=ahead))
            except DestinationDown as exc:
                resume = self.resume_points(plan) if window is None else None
                raise SyncStopped.destination_down(exc, self.source.name, stream,
                                                   resume) from None
        return reports

    def lease(self, kind: str) -> AbstractContextManager[None]:
        """Hold the source for one run of ``kind`` (``StateStore.lease``): its syncs,
        backfills, audits and reconciliations all take it, as each writes the ledger and a
        reconciliation's re-send of what it read could overwrite a newer sync. Raises
        ``SourceBusy`` when another run still holds it after ``lease_wait`` seconds."""
        return self.state.lease(self.source.name, kind, self.lease_wait, self.on_lease_wait)

    def resume_points(self, plan: Mapping[str, object] | None = None) -> dict[str, Resume]:
        """Stream -> the cursor its next run reads after (None: from its beginning), or
        ``"whole"`` for a stream read whole every run."""
        cursor = functools.partial(self.state.get_cursor, self.source.name)
        return {stream: "whole" if stream in self.read_whole else resume_of(cursor, stream)
                for stream in (plan if plan is not None else self.plan())}

    async def reconcile(
        self, *, deadline_seconds: float = 600, max_resends: int = 3
    ) -> ReconcileReport:
        """Confirm what was accepted became visible; re-send what did not, in time.

        Raises:
            SourceBusy: another run of the source holds it (``lease``); nothing was done.
        """
        resources = [r for rs in self.plan().values() for r in rs]
        with self.lease("reconcile"):
            return await self._reconcile(resources, deadline_seconds, max_resends)

    async def _reconcile(self, resources: list[str], deadline_seconds: float,
                         max_resends: int) -> ReconcileReport:
        async with self.open_client() as client:
            id_data_source = await resolve_data_source(
                client, self.source.data_source, create=False
            )
            reconciler = Reconciler(
                source=self.source.name, state=self.state, client=client,
                id_data_source=id_data_source, deadline=timedelta(seconds=deadline_seconds),
                max_resends=max_resends, concurrency=self.source.tuning.concurrency,
                clock=self.clock,
            )
            run_id = self.state.start_run(self.source.name, None, "reconcile")
            try:
                report = await reconciler.run(resources)
                try:
                    deleted = await self._incremental_deletions(client)
                except (MarketingApiError, SourceError) as exc:  # what was checked still is
                    deleted = Counter()
                    report.problems.append(f"deletions at the source: not checked: {exc}")
                for resource, n in deleted.items():
                    report.resources[resource].deleted += n
                kept = timedelta(days=self.config.reconciliation.keep_events_days)
                report.events_pruned = self.state.prune_events(self.source.name,
                                                               self.clock() - kept)
            except BaseException as exc:
                self.state.finish_run(run_id, "failed", {}, error=str(exc))
                raise
            pending = sum(c.get(ItemStatus.ACCEPTED.value, 0)
                          for c in self.state.counts(self.source.name).values())
            self.state.finish_run(run_id, "succeeded", {**report.totals(), "pending": pending})
            return report

    def recent_window(self) -> Window:
        """The last ``reconciliation.completeness_hours`` of change time, up to a settled
        second."""
        end = self.clock() - SETTLE
        return Window(end - timedelta(hours=self.config.reconciliation.completeness_hours), end)

    async def completeness(self, window: Window | None = None) -> list[StreamCompleteness]:
        """Per stream: records at the source, extracted, final, visible, and the gaps —
        over all time, or for the records that changed in ``window``."""
        connector = self.open_connector()
        try:
            if window is None:
                return await completeness(self.state, self.source.name, connector, self.plan())
            return await completeness_in_window(self.state, self.source.name, connector,
                                                self.plan(), window.start, window.end)
        finally:
            await connector.aclose()

    async def _incremental_deletions(self, client: MarketingClient) -> Counter[str]:
        """Deletions in streams read incrementally (full reads find theirs while syncing):
        what the platform reports, else a comparison of id sets where it can list them."""
        deleted: Counter[str] = Counter()
        connector = self.open_connector()
        try:
            for stream, resources in self.plan().items():
                if not connector.streams()[stream].incremental:
                    continue
                gone = await reported_deletions(connector, stream, since=None)
                if gone is None:
                    present = await present_ids(connector, stream)
                    if present is None:
                        continue
                    gone = stale_records(self.state, self.source.name, resources, present)
                deleted.update(await delete_records(
                    state=self.state, client=client, source=self.source.name,
                    resources=resources, record_ids=gone,
                ))
        finally:
            await connector.aclose()
        return deleted

    async def retry_rejections(self, resources: Sequence[str] | None = None) -> list[StreamReport]:
        """Map the rejected and parked items again from the source (after a mapping fix)
        and send them: their streams are re-read whole, and only those items are pushed."""
        plan = self.plan()
        wanted = set(resources) if resources else {r for rs in plan.values() for r in rs}
        keys: dict[str, set[str]] = {}
        for resource in wanted:
            entries = self.state.entries(self.source.name, resource,
                                         {ItemStatus.REJECTED, ItemStatus.PARKED})
            if entries:
                keys[resource] = {e.key for e in entries}
        streams = [s for s, rs in plan.items() if set(rs) & set(keys)]
        if not streams:
            return []
        everything = Window(datetime(1970, 1, 1, tzinfo=UTC), self.clock())
        return await self.run(streams, window=everything, only=set(keys), only_keys=keys)
