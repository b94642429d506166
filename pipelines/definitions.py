"""The Dagster code location of shopsync, built from the configuration.

``workspace.yaml`` loads ``defs``: the sync assets of every configured source (from
``$SHOPSYNC_CONFIG``, else ``./shops.yaml``) with a reconciliation report per source, a sync
job and schedule and a reconciliation job and schedule per source, a job syncing every source
on the configured executor (``assets.execution``) — or, with ``layout: shop_partitions``,
the same per platform with the shops as partitions (``assets.shop_partitions``) — and
sensors that report
failed runs, rejection spikes and parked items; the resources they take as typed parameters
(``assets.resources``, ``assets.secrets``, ``assets.window``). ``defs`` is built when Dagster loads the
location, not when this module is imported (``build_definitions`` is importable on its own).

The demo configuration loads only when asked for: ``shopsync dev`` sets
``SHOPSYNC_DEMO_PLATFORM`` (and no ``SHOPSYNC_CONFIG``). A file that is missing, unreadable
or invalid fails the location with a message naming it — never the demo in its place.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import NamedTuple

import dagster as dg

from assets.alerts import alerts_sensor, failed_runs_sensor
from assets.concurrency import source_tags
from assets.execution import all_sources_job
from assets.reconciliation import reconciliation_asset
from assets.resources import shared_resources
from assets.secrets import SourceSecrets, secrets_for, secrets_key
from assets.shop_partitions import build_partitioned_definitions
from assets.sync import stream_asset
from assets.window import WINDOW_KEY, SyncWindow
from pipelines.engine.config import (
    CONFIG_ENV,
    Config,
    ConfigError,
    Source,
    config_path,
    load_config,
)
from pipelines.engine.runner import selected_resources

log = logging.getLogger("shopsync.definitions")
#: above this many sources, a location with a group per shop says that partitions load faster
MANY_SHOPS = 100


def automation_status(config: Config) -> dg.DefaultScheduleStatus:
    return (dg.DefaultScheduleStatus.RUNNING if config.automation
            else dg.DefaultScheduleStatus.STOPPED)


def _sync_schedule(config: Config, source: Source, job: dg.JobDefinition) -> dg.ScheduleDefinition:
    cron = config.schedule_for(source)
    assert cron is not None
    return dg.ScheduleDefinition(
        name=f"{source.name}_schedule", cron_schedule=cron, job=job,
        execution_timezone="UTC", default_status=automation_status(config),
        description=f"The incremental sync of {source.name} (`sources[].schedule`, else every"
                    " 15 minutes at a minute of its own); turned on when the location loads"
                    " unless `automation: off`",
    )


class _SourceDefinitions(NamedTuple):
    assets: list[dg.AssetsDefinition]
    #: the keys of its sync assets (the reconciliation report aside)
    synced: list[dg.AssetKey]
    jobs: list[dg.JobDefinition]
    schedules: list[dg.ScheduleDefinition]
    secrets: SourceSecrets


def _source_definitions(config: Config, source: Source,
                        shared: Mapping[str, dg.ConfigurableResource]) -> _SourceDefinitions:
    """One source's assets, its secrets, its two jobs and their schedules.

    The jobs are resolved here, among the source's own assets and resources: Dagster
    resolves a job given unresolved against every asset of the location and gives it every
    resource of the location, which makes a location of N sources cost N² (500 sources:
    minutes to load, see the README's "Many shops")."""
    assets: list[dg.AssetsDefinition] = []
    plan = selected_resources(source, config.destination_for(source).write_carts)
    produced = {resource for resources_ in plan.values() for resource in resources_}
    synced = []
    for stream, stream_resources in plan.items():
        asset = stream_asset(config, source, stream, stream_resources, produced)
        assets.append(asset)
        synced += list(asset.keys)
    report = reconciliation_asset(config, source, synced)
    assets.append(report)
    sync = dg.define_asset_job(
        f"{source.name}_sync", selection=dg.AssetSelection.assets(*synced),
        executor_def=dg.in_process_executor, tags=source_tags(source),
        description=f"Sync {source.name} into the Marketing API: the incremental sync from"
                    " the stored cursors; set `resources.sync_window.config` start and end"
                    " (YYYY-MM-DD) in the Launchpad to backfill a window instead. Each"
                    " step ends with its assets' checks: the run's, and the ledger's"
                    " state.")
    check = dg.define_asset_job(
        f"{source.name}_reconcile",
        selection=dg.AssetSelection.assets(report),
        executor_def=dg.in_process_executor, tags=source_tags(source),
        description=f"Reconcile {source.name}: read accepted items back, re-send what is"
                    " missing, audit a sample of what is visible; its report's checks say"
                    " what the ledger of the whole source still holds back.")
    secrets = secrets_for(config, source)
    own = dg.Definitions(assets=assets, jobs=[sync, check],
                         resources={**shared, secrets_key(source): secrets})
    jobs = [own.resolve_job_def(sync.name), own.resolve_job_def(check.name)]
    schedules = [dg.ScheduleDefinition(
        name=f"{source.name}_reconcile_schedule", job=jobs[1],
        cron_schedule=config.reconciliation_schedule_for(source), execution_timezone="UTC",
        default_status=automation_status(config),
        description=f"Reconciliation of {source.name} (`reconciliation.schedule`, else every"
                    " 5 minutes at a minute of its own); turned on when the location loads"
                    " unless `automation: off`",
    )]
    if config.schedule_for(source):
        schedules.insert(0, _sync_schedule(config, source, jobs[0]))
    return _SourceDefinitions(assets, synced, jobs, schedules, secrets)


def build_definitions(config: Config) -> dg.Definitions:
    """The location in the configuration's ``layout``: a group per shop (below), or shops as
    partitions (``assets.shop_partitions``); with the sensors reporting failed runs,
    rejection spikes and parked items either way."""
    sensor_status = (dg.DefaultSensorStatus.RUNNING if config.automation
                     else dg.DefaultSensorStatus.STOPPED)
    sensors = [failed_runs_sensor(config, sensor_status), alerts_sensor(config, sensor_status)]
    if config.layout == "shop_partitions":
        return build_partitioned_definitions(config, automation_status(config), sensors)
    if len(config.sources) > MANY_SHOPS:
        log.warning(f"{len(config.sources)} sources with `layout: shop_groups` (a group per"
                    " shop): the location's load grows with the shop count (500: about a"
                    " minute); `layout: shop_partitions` loads 500 in seconds, see the"
                    " README's \"Many shops\"")
    return _shop_groups(config, sensors)


def _shop_groups(config: Config, sensors: list[dg.SensorDefinition]) -> dg.Definitions:
    """Per source: its sync assets (with their checks), a reconciliation report; a sync
    job and a reconciliation job with their schedules. Jobs run their steps in one process:
    a step is seconds of work, and a process per step would pay the interpreter's start and
    the great-expectations import again for each."""
    shared: dict[str, dg.ConfigurableResource] = {WINDOW_KEY: SyncWindow(),
                                                   **shared_resources(config)}
    assets: list[dg.AssetsDefinition] = []
    resources: dict[str, dg.ConfigurableResource] = dict(shared)
    jobs: list[dg.JobDefinition] = []
    schedules: list[dg.ScheduleDefinition] = []
    every_source: list[dg.AssetKey] = []
    for source in config.sources:
        own = _source_definitions(config, source, shared)
        assets += own.assets
        resources[secrets_key(source)] = own.secrets
        jobs += own.jobs
        schedules += own.schedules
        every_source += own.synced
    jobs.append(all_sources_job(config.execution, every_source))
    return dg.Definitions(assets=assets, resources=resources, jobs=jobs, schedules=schedules,
                          sensors=sensors)


#: set to a platform by ``shopsync dev``: the location serves the demo configuration
DEMO_ENV = "SHOPSYNC_DEMO_PLATFORM"


def load_definitions(env: Mapping[str, str] = os.environ) -> dg.Definitions:
    """The configured sources; the demo's when ``env`` asks for it and names no file."""
    demo = env.get(DEMO_ENV)
    if demo and not env.get(CONFIG_ENV):
        from pipelines.demo import demo_config
        from pipelines.demo_specs import demo_platforms

        demos = demo_platforms()
        if demo not in demos:
            raise ConfigError([f"{DEMO_ENV}: no demo of {demo!r}; use one of: {', '.join(demos)}"])
        return build_definitions(demo_config(platform_name=demo))
    path = config_path(env.get(CONFIG_ENV))
    try:
        config = load_config(path)
    except ConfigError as exc:
        if path.exists():
            raise
        raise ConfigError([*exc.problems, f"for the demo configuration, run `shopsync dev` (or"
                           f" set {DEMO_ENV} to a platform, like woocommerce)"]) from None
    return build_definitions(config)


@dg.definitions
def defs() -> dg.Definitions:
    """The code location, built when Dagster loads it."""
    return load_definitions()
