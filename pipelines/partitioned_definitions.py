"""A prototype of the code location with shops as partitions: measured, not the product's.

``pipelines.definitions`` gives each shop its own assets, jobs, schedules and secrets, so the
location grows with the shop count (500 shops: 6 000 assets, 1 000 jobs, about a minute to
load). Here the shops of one platform share one set of assets, partitioned by shop name: the
location holds about a dozen assets per platform whatever the count of shops, a job per
platform, and a schedule per platform that asks, every minute, for a run of each shop whose
own cron (``Config.schedule_for``) fires then. A run is one shop's partition: the asset body
finds the source from ``context.partition_key`` and runs the engine as ``assets.sync`` does;
the secrets are read from the variables the configuration names when the run starts, as
there is no resource per shop to carry them. ``bench/many_shops.py --models`` times its
load against today's location, ``bench/ui_scale.py --model partitions`` serves it (``defs``)
in the UI; the README's "Many shops" says why a shop is a group of its own today.

What it leaves out: the reconciliation report and its job, the job of every source, the
sensors, and the destination pool of a step (a pool belongs to an asset, and one asset now
serves shops of several destination keys; runs carry the key's variable as a tag instead).
"""


import asyncio
import os
import warnings
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Literal

import dagster as dg
from dagster import AssetExecutionContext

from assets import concurrency
from assets.graph import REFERS_TO
from assets.ledger_checks import state_check_results, state_check_specs
from assets.metadata import metadata_of
from assets.resources import StateDatabase, shared_resources
from assets.secrets import SourceSecrets, secrets_for
from assets.sync import (
    RUN_QUALITY,
    RUN_REJECTIONS,
    busy_failure,
    quality_check_of,
    rejections_check_of,
    stopped_failure,
)
from assets.window import WINDOW_KEY, SyncWindow, describe
from pipelines.engine.config import Config, Source
from pipelines.engine.runner import SourceRunner, selected_resources
from pipelines.engine.state import SourceBusy
from pipelines.engine.stopped import SyncStopped

Partitioning = Literal["static", "dynamic"]
#: the run tag naming the variable of a run's destination key: a tag concurrency limit on
#: it stands in for the destination pool a step of a shop's own asset has
DESTINATION_TAG = "shopsync/destination"


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


def shops_partitions(group: str, sources: list[Source],
                     partitioning: Partitioning) -> dg.PartitionsDefinition:
    """The shops of a group as partitions: listed in the code (static), or kept in the
    instance by the ``shopsync_shop_partitions`` sensor (dynamic)."""
    if partitioning == "dynamic":
        return dg.DynamicPartitionsDefinition(name=f"{group}_shops")
    return dg.StaticPartitionsDefinition([s.name for s in sources])


def source_env(config: Config, source: Source,
               environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables the configuration names for ``source`` (its destination's key, its
    shop's credentials), read when its run starts; the engine says which one is missing."""
    declared = secrets_for(config, source)
    names = [var.env_var_name for var in (getattr(declared, field)
                                          for field in SourceSecrets.model_fields)
             if isinstance(var, dg.EnvVar)]
    return {name: environ[name] for name in names if name in environ}


def _partitioned_checks(key: dg.AssetKey, resource: str,
                        partitions: dg.PartitionsDefinition) -> list[dg.AssetCheckSpec]:
    """The checks of a sync asset, partitioned like it: the UI keeps each shop's last
    evaluation, where an unpartitioned check would show the last shop's for every shop.
    Dagster 1.13 calls a check's ``partitions_def`` a preview, "not considered ready for
    production use": its warning is silenced here, and is one of the prototype's risks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [
            *(dg.AssetCheckSpec(spec.name, asset=key, description=spec.description,
                                partitions_def=partitions) for spec in state_check_specs(key)),
            dg.AssetCheckSpec(RUN_REJECTIONS, asset=key, partitions_def=partitions,
                              description=f"Run: {resource} items the API refused in this"
                                          " shop's run"),
            dg.AssetCheckSpec(RUN_QUALITY, asset=key, partitions_def=partitions,
                              description=f"Run: the {resource} rows this shop's run judged"
                                          " and held back, by rule"),
        ]


def _partitioned_stream_asset(config: Config, group: str, sources: Mapping[str, Source],
                              stream: str, resources: list[str], produced: set[str],
                              partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """One stream of every shop of a group: a run materializes one shop's partition."""
    specs, check_specs = [], []
    for resource in resources:
        key = dg.AssetKey([group, resource])
        upstream = [dg.AssetKey([group, r]) for r in REFERS_TO.get(resource, ())
                    if r in produced and r != resource]
        specs.append(dg.AssetSpec(
            key, group_name=group, deps=upstream, partitions_def=partitions,
            kinds={group.split("_")[0], "api"},
            description=f"The {resource} of every {group} shop, a partition per shop (read"
                        f" from its `{stream}` stream), pushed to the Marketing API.",
        ))
        check_specs += _partitioned_checks(key, resource, partitions)

    @dg.multi_asset(name=f"{group}__{'_'.join(resources)}", specs=specs,
                    check_specs=check_specs, can_subset=False)
    def _sync(context: AssetExecutionContext, sync_window: SyncWindow,
              state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
        source = sources[context.partition_key]
        window = sync_window.window()
        with state_database.open(config) as state:
            runner = SourceRunner(config, source, state, source_env(config, source),
                                  lease_wait=concurrency.STEP_LEASE_WAIT,
                                  on_lease_wait=context.log.info)
            context.log.info(f"{source.name}/{stream}: {describe(window)}")
            try:
                (report,) = asyncio.run(runner.run([stream], window=window))
            except SyncStopped as exc:
                raise stopped_failure(exc) from None
            except SourceBusy as exc:
                raise busy_failure(exc) from None
            keys = {resource: dg.AssetKey([group, resource]) for resource in resources}
            held = state_check_results(state, source.name, keys)
            for resource, key in keys.items():
                yield dg.MaterializeResult(
                    asset_key=key,
                    metadata=metadata_of(report, resource, state, source, window),
                    check_results=[*held[resource],
                                   rejections_check_of(report, resource, key,
                                                       config.alerts.max_rejection_rate),
                                   quality_check_of(report, resource, key)],
                )

    return _sync


def run_request(config: Config, source: Source, at: datetime | None = None) -> dg.RunRequest:
    """A run of one shop's partition, tagged as every job of a source is."""
    return dg.RunRequest(
        run_key=f"{source.name}:{at.isoformat()}" if at else None,
        partition_key=source.name,
        tags={**concurrency.source_tags(source),
              DESTINATION_TAG: config.destination_for(source).api_key_env})


def due(config: Config, sources: list[Source], at: datetime) -> list[Source]:
    """The sources whose own schedule fires at the minute ``at`` (UTC)."""
    from dagster._vendored.croniter import croniter

    crons = {s.name: config.schedule_for(s) for s in sources}
    return [s for s in sources if (cron := crons[s.name]) and croniter.match(cron, at)]


def _group_schedule(config: Config, group: str, sources: list[Source],
                    job: "dg.UnresolvedAssetJobDefinition") -> dg.ScheduleDefinition:
    @dg.schedule(
        name=f"{group}_schedule", cron_schedule="* * * * *", job=job,
        execution_timezone="UTC",
        default_status=(dg.DefaultScheduleStatus.RUNNING if config.automation
                        else dg.DefaultScheduleStatus.STOPPED),
        description=f"Every minute, a run of each {group} shop whose own schedule"
                    " (`sources[].schedule`, else every 15 minutes at a minute of its own)"
                    " fires then",
    )
    def _every_minute(context: dg.ScheduleEvaluationContext) -> Iterator[dg.RunRequest]:
        at = context.scheduled_execution_time
        for source in due(config, sources, at):
            yield run_request(config, source, at)

    return _every_minute


def _partitions_sensor(groups: Mapping[str, list[Source]]) -> dg.SensorDefinition:
    """Keeps each group's dynamic partitions equal to the configured shops."""

    @dg.sensor(name="shopsync_shop_partitions", minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="Adds the configured shops as partitions of their platform's"
                           " assets and removes the shops no longer configured")
    def _sync_partitions(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
        for group, sources in groups.items():
            name = f"{group}_shops"
            known = set(context.instance.get_dynamic_partitions(name))
            wanted = {s.name for s in sources}
            if wanted - known:
                requests.append(dg.AddDynamicPartitionsRequest(name, sorted(wanted - known)))
            if known - wanted:
                requests.append(dg.DeleteDynamicPartitionsRequest(name, sorted(known - wanted)))
        return dg.SensorResult(dynamic_partitions_requests=requests)

    return _sync_partitions


def build_partitioned_definitions(config: Config,
                                  partitioning: Partitioning = "static") -> dg.Definitions:
    """Per platform: its sync assets partitioned by shop (checks per asset, evaluated per
    partition), a sync job, and a schedule that spreads the shops' runs over the minutes."""
    assets: list[dg.AssetsDefinition] = []
    jobs, schedules = [], []
    groups = platform_groups(config)
    for group, sources in groups.items():
        partitions = shops_partitions(group, sources, partitioning)
        first = sources[0]
        plan = selected_resources(first, config.destination_for(first).write_carts)
        produced = {r for resources in plan.values() for r in resources}
        by_name = {s.name: s for s in sources}
        own = [_partitioned_stream_asset(config, group, by_name, stream, resources, produced,
                                         partitions)
               for stream, resources in plan.items()]
        assets += own
        job = dg.define_asset_job(
            f"{group}_sync", selection=dg.AssetSelection.assets(*own),
            executor_def=dg.in_process_executor,
            description=f"Sync one {group} shop (the run's partition) into the Marketing API")
        jobs.append(job)
        schedules.append(_group_schedule(config, group, sources, job))
    sensors = [_partitions_sensor(groups)] if partitioning == "dynamic" else []
    return dg.Definitions(
        assets=assets, jobs=jobs, schedules=schedules, sensors=sensors,
        resources={WINDOW_KEY: SyncWindow(), **shared_resources(config)})


#: ``static`` (the default) or ``dynamic``: how a location served from this module lists shops
PARTITIONING_ENV = "SHOPSYNC_PARTITIONING"


@dg.definitions
def defs() -> dg.Definitions:
    """The prototype as a code location (``bench/ui_scale.py --model partitions`` serves it):
    the file ``$SHOPSYNC_CONFIG`` names, else ``./shops.yaml``."""
    from pipelines.engine.config import config_path, load_config

    config = load_config(config_path(os.environ.get("SHOPSYNC_CONFIG")))
    if os.environ.get(PARTITIONING_ENV) == "dynamic":
        return build_partitioned_definitions(config, "dynamic")
    return build_partitioned_definitions(config)
