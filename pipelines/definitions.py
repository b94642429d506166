"""The Dagster code location of shopsync, built from the configuration.

``workspace.yaml`` loads ``defs``: the sync assets of every configured source (from
``$SHOPSYNC_CONFIG`` or ``./shops.yaml``; without either, the demo configuration that
``shopsync dev`` serves) with a reconciliation report per source, a sync job and schedule and
a reconciliation job and schedule per source, and sensors that report failed runs,
rejection spikes and parked items.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import dagster as dg

from assets.alerts import alerts_sensor, failed_runs_sensor
from assets.reconciliation import reconciliation_asset
from assets.secrets import secrets_for, secrets_key
from assets.sync import stream_asset
from pipelines.engine.config import Config, Source, config_path, load_config
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


def load_definitions() -> dg.Definitions:
    path = config_path()
    if path.exists():
        return build_definitions(load_config(path))
    from pipelines.demo import DEFAULT_PLATFORM, demo_config

    return build_definitions(
        demo_config(platform_name=os.environ.get("SHOPSYNC_DEMO_PLATFORM", DEFAULT_PLATFORM))
    )


defs = load_definitions()
