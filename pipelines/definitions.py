"""The Dagster code location of shopsync, built from the configuration.

``workspace.yaml`` loads ``defs``: the sync assets of every configured source (from
``$SHOPSYNC_CONFIG``, else ``./shops.yaml``) with a reconciliation report per source, a sync
job and schedule and a reconciliation job and schedule per source, and sensors that report
failed runs, rejection spikes and parked items. ``defs`` is built when Dagster loads the
location, not when this module is imported (``build_definitions`` is importable on its own).

The demo configuration loads only when asked for: ``shopsync dev`` sets
``SHOPSYNC_DEMO_PLATFORM`` (and no ``SHOPSYNC_CONFIG``). A file that is missing, unreadable
or invalid fails the location with a message naming it — never the demo in its place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime

import dagster as dg

from assets.alerts import alerts_sensor, failed_runs_sensor
from assets.reconciliation import reconciliation_asset
from assets.secrets import secrets_for, secrets_key
from assets.sync import stream_asset
from pipelines.engine.config import (
    CONFIG_ENV,
    Config,
    ConfigError,
    Source,
    config_path,
    load_config,
)
from pipelines.engine.runner import selected_resources


def _schedule(source: Source, job: dg.UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    assert source.schedule is not None

    @dg.schedule(name=f"{source.name}_schedule", cron_schedule=source.schedule, job=job,
                 execution_timezone="UTC")
    def _every(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
        """The incremental sync: today's partition, which reads from the stored cursor."""
        when = context.scheduled_execution_time or datetime.now(UTC)
        return dg.RunRequest(partition_key=when.astimezone(UTC).strftime("%Y-%m-%d"))

    return _every


def build_definitions(config: Config) -> dg.Definitions:
    assets: list[dg.AssetsDefinition] = []
    resources: dict[str, dg.ConfigurableResource] = {}
    jobs = []
    schedules = []
    for source in config.sources:
        plan = selected_resources(source, config.destination.write_carts)
        produced = {resource for resources_ in plan.values() for resource in resources_}
        synced = []
        for stream, stream_resources in plan.items():
            asset = stream_asset(config, source, stream, stream_resources, produced)
            assets.append(asset)
            synced += list(asset.keys)
        report = reconciliation_asset(config, source, synced)
        assets.append(report)
        resources[secrets_key(source)] = secrets_for(config, source)
        job = dg.define_asset_job(f"{source.name}_sync", selection=dg.AssetSelection.assets(*synced))
        jobs.append(job)
        if source.schedule:
            schedules.append(_schedule(source, job))
        check = dg.define_asset_job(f"{source.name}_reconcile",
                                    selection=dg.AssetSelection.assets(report))
        jobs.append(check)
        schedules.append(dg.ScheduleDefinition(
            name=f"{source.name}_reconcile_schedule", job=check,
            cron_schedule=config.reconciliation.schedule, execution_timezone="UTC",
        ))
    return dg.Definitions(
        assets=assets, resources=resources, jobs=jobs, schedules=schedules,
        sensors=[failed_runs_sensor(config), alerts_sensor(config)],
    )


#: set to a platform by ``shopsync dev``: the location serves the demo configuration
DEMO_ENV = "SHOPSYNC_DEMO_PLATFORM"


def load_definitions(env: Mapping[str, str] = os.environ) -> dg.Definitions:
    """The configured sources; the demo's when ``env`` asks for it and names no file."""
    demo = env.get(DEMO_ENV)
    if demo and not env.get(CONFIG_ENV):
        from pipelines.demo import demo_config
        from pipelines.engine.platforms import names, platform

        demos = [name for name in names() if platform(name).demo is not None]
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
