"""The location's ``layout: shop_partitions``: the shops of a platform as the partitions of
one set of assets, for a location of hundreds of shops.

With ``shop_groups`` each shop has its own assets, jobs, schedules and secrets resource, so
the location grows with the shop count (500 shops: 6 000 assets, 1 000 jobs, about a minute
to load). Here the shops of one platform whose streams are alike share one set of assets,
partitioned by shop name (a static partition per configured shop: the file is the list of
shops, and the location reloads when it changes). The location holds about a dozen assets
per platform whatever the count of shops: per group, a sync job and a reconciliation job,
and two schedules that ask, every minute, for a run of each shop whose own cron
(``Config.schedule_for``, ``Config.reconciliation_schedule_for``) fires then, so 500 shops
stay spread as in the other layout. A run is one shop's partition: its step finds the source
from ``context.partition_key`` and runs the same body as a shop's own asset
(``assets.sync.sync_step``, ``assets.reconciliation.reconcile_step``); the secrets are read
from the variables the configuration names when the run starts, as there is no resource per
shop to carry them. The README's "Many shops" says what this costs in the UI.
"""


import os
import warnings
from collections.abc import Iterator, Mapping
from datetime import datetime

import dagster as dg
from dagster import AssetExecutionContext

from assets import concurrency
from assets.execution import executor_for
from assets.graph import REFERS_TO
from assets.reconciliation import reconcile_step, report_check_specs
from assets.resources import StateDatabase, shared_resources
from assets.secrets import SourceSecrets, secrets_for
from assets.sync import stream_check_specs, sync_step
from assets.window import WINDOW_KEY, SyncWindow
from pipelines.engine.config import Config, Source
from pipelines.engine.runner import selected_resources


def platform_groups(config: Config) -> dict[str, list[Source]]:
    """Group name -> its sources: the platform, or ``<platform>_<n>`` for the sources of a
    platform whose streams and resources differ from the first ones' (an asset is one plan)."""
    plans: dict[str, list[tuple[object, list[Source]]]] = {}
    for source in config.sources:
        plan = selected_resources(source, config.destination_for(source).write_carts)
        shapes = plans.setdefault(source.platform, [])
        for shape, members in shapes:
            if shape == plan:
                members.append(source)
                break
        else:
            shapes.append((plan, [source]))
    return {(platform if i == 0 else f"{platform}_{i + 1}"): members
            for platform, shapes in plans.items() for i, (_, members) in enumerate(shapes)}


def source_env(config: Config, source: Source,
               environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables the configuration names for ``source`` (its destination's key, its
    shop's credentials), read when its run starts; the engine says which one is missing."""
    declared = secrets_for(config, source)
    names = [var.env_var_name for var in (getattr(declared, field)
                                          for field in SourceSecrets.model_fields)
             if isinstance(var, dg.EnvVar)]
    return {name: environ[name] for name in names if name in environ}


def _partitioned(specs: list[dg.AssetCheckSpec],
                 partitions: dg.PartitionsDefinition) -> list[dg.AssetCheckSpec]:
    """Checks partitioned like their asset, so the UI keeps each shop's last evaluation where
    an unpartitioned check would show the last shop's for every shop. Dagster 1.13 calls a
    check's ``partitions_def`` a preview; its warning is silenced here, and the README names
    the risk."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [spec._replace(partitions_def=partitions) for spec in specs]


def _pool(config: Config, sources: list[Source]) -> str | None:
    """The destination pool of a group's steps when all its shops send with one key."""
    pools = {concurrency.destination_pool(config.destination_for(s)) for s in sources}
    return pools.pop() if len(pools) == 1 else None


def _stream_asset(config: Config, group: str, sources: Mapping[str, Source], stream: str,
                  resources: list[str], produced: set[str],
                  partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """One stream of every shop of a group: a run materializes one shop's partition."""
    keys = {resource: dg.AssetKey([group, resource]) for resource in resources}
    specs, check_specs = [], []
    for resource, key in keys.items():
        upstream = [dg.AssetKey([group, r]) for r in REFERS_TO.get(resource, ())
                    if r in produced and r != resource]
        specs.append(dg.AssetSpec(
            key, group_name=group, deps=upstream, partitions_def=partitions,
            kinds={group.split("_")[0], "api"},
            description=f"The {resource} of every {group} shop, a partition per shop (read"
                        f" from its `{stream}` stream), mapped, validated and pushed to the"
                        " Marketing API. A partition's metadata is that shop's last run.",
        ))
        check_specs += _partitioned(stream_check_specs(key, resource), partitions)

    @dg.multi_asset(name=f"{group}__{'_'.join(resources)}", specs=specs,
                    check_specs=check_specs, can_subset=False,
                    pool=_pool(config, list(sources.values())))
    def _sync(context: AssetExecutionContext, sync_window: SyncWindow,
              state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
        source = sources[context.partition_key]
        yield from sync_step(context, config, source, stream, keys, source_env(config, source),
                             sync_window, state_database)

    return _sync


def _report_asset(config: Config, group: str, sources: Mapping[str, Source],
                  synced: list[dg.AssetKey],
                  partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """The reconciliation report of every shop of a group, a partition per shop."""
    key = dg.AssetKey([group, "reconciliation"])

    @dg.asset(key=key, group_name=group, deps=synced, kinds={"api"},
              partitions_def=partitions, pool=_pool(config, list(sources.values())),
              check_specs=_partitioned(report_check_specs(key), partitions),
              description=f"The reconciliation report of every {group} shop, a partition per"
                          " shop: audits a sample of what it holds as visible, reads back"
                          " what it sent, re-sends what is missing, and summarises every"
                          " item's state.")
    def _reconcile(context: AssetExecutionContext,
                   state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
        source = sources[context.partition_key]
        yield from reconcile_step(context, config, source, key, source_env(config, source),
                                  state_database)

    return _reconcile


def run_request(config: Config, source: Source, at: datetime | None = None) -> dg.RunRequest:
    """A run of one shop's partition, tagged as every job of a source is, and with its
    destination key's variable."""
    return dg.RunRequest(
        run_key=f"{source.name}:{at.isoformat()}" if at else None,
        partition_key=source.name,
        tags={**concurrency.source_tags(source),
              concurrency.DESTINATION_TAG: config.destination_for(source).api_key_env})


def due(crons: Mapping[str, str | None], sources: list[Source], at: datetime) -> list[Source]:
    """The sources whose cron (``crons``: source name -> cron) fires at the minute ``at``:
    each distinct cron is matched once (500 shops on their spread defaults share 15)."""
    from dagster._vendored.croniter import croniter

    fires: dict[str, bool] = {}
    for distinct in {c for c in crons.values() if c}:
        fires[distinct] = croniter.match(distinct, at)
    return [s for s in sources if (cron := crons[s.name]) and fires[cron]]


def _every_minute(config: Config, name: str, sources: list[Source],
                  crons: Mapping[str, str | None], job: "dg.UnresolvedAssetJobDefinition",
                  status: dg.DefaultScheduleStatus, what: str) -> dg.ScheduleDefinition:
    @dg.schedule(name=name, cron_schedule="* * * * *", job=job, execution_timezone="UTC",
                 default_status=status, description=what)
    def _due(context: dg.ScheduleEvaluationContext) -> Iterator[dg.RunRequest]:
        at = context.scheduled_execution_time
        for source in due(crons, sources, at):
            yield run_request(config, source, at)

    return _due


def build_partitioned_definitions(config: Config, status: dg.DefaultScheduleStatus,
                                  sensors: list[dg.SensorDefinition]) -> dg.Definitions:
    """Per group of alike shops: its sync assets and reconciliation report partitioned by
    shop, a sync job and a reconciliation job, and the schedules that spread the shops' runs
    over the minutes as their own crons say."""
    assets: list[dg.AssetsDefinition] = []
    jobs: list[dg.UnresolvedAssetJobDefinition] = []
    schedules: list[dg.ScheduleDefinition] = []
    executor = executor_for(config.execution)
    for group, sources in platform_groups(config).items():
        partitions = dg.StaticPartitionsDefinition([s.name for s in sources])
        first = sources[0]
        plan = selected_resources(first, config.destination_for(first).write_carts)
        produced = {r for resources in plan.values() for r in resources}
        by_name = {s.name: s for s in sources}
        streams = [_stream_asset(config, group, by_name, stream, resources, produced, partitions)
                   for stream, resources in plan.items()]
        synced = [key for asset in streams for key in asset.keys]
        report = _report_asset(config, group, by_name, synced, partitions)
        assets += [*streams, report]
        sync = dg.define_asset_job(
            f"{group}_sync", selection=dg.AssetSelection.assets(*streams),
            executor_def=executor,
            description=f"Sync one {group} shop (the run's partition) into the Marketing API:"
                        " the incremental sync from its stored cursors; set"
                        " `resources.sync_window.config` start and end in the Launchpad to"
                        " backfill a window instead. Several shops at once: a backfill of"
                        " their partitions.")
        reconcile = dg.define_asset_job(
            f"{group}_reconcile", selection=dg.AssetSelection.assets(report),
            executor_def=dg.in_process_executor,
            description=f"Reconcile one {group} shop (the run's partition): read accepted"
                        " items back, re-send what is missing, audit a sample of what is"
                        " visible.")
        jobs += [sync, reconcile]
        syncing = {s.name: config.schedule_for(s) for s in sources}
        if any(syncing.values()):
            schedules.append(_every_minute(
                config, f"{group}_schedule", sources, syncing, sync, status,
                f"Every minute, a run of each {group} shop whose own schedule"
                " (`sources[].schedule`, else every 15 minutes at a minute of its own) fires"
                " then"))
        schedules.append(_every_minute(
            config, f"{group}_reconcile_schedule", sources,
            {s.name: config.reconciliation_schedule_for(s) for s in sources}, reconcile, status,
            f"Every minute, a reconciliation of each {group} shop whose own schedule"
            " (`reconciliation.schedule`, else every 5 minutes at a minute of its own) fires"
            " then"))
    return dg.Definitions(assets=assets, jobs=jobs, schedules=schedules, sensors=sensors,
                          resources={WINDOW_KEY: SyncWindow(), **shared_resources(config)})
