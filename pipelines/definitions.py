"""The Dagster code location of shopsync, built from the configuration.

``workspace.yaml`` loads ``defs``: the sync assets of every configured source (from
``$SHOPSYNC_CONFIG`` or ``./shops.yaml``; without either, the demo configuration that
``shopsync dev`` serves), a job and a schedule per source, and a sensor that reports failed
runs.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import dagster as dg

from assets.secrets import secrets_for, secrets_key
from assets.sync import stream_asset
from pipelines.engine.config import Config, Source, config_path, load_config
from pipelines.engine.mappings import mapping_for
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


@dg.run_failure_sensor(name="shopsync_failed_runs", minimum_interval_seconds=30)
def report_failed_runs(context: dg.RunFailureSensorContext) -> None:
    """Says which sync failed and why, in the sensor's log (and the daemon's)."""
    context.log.error(
        "shopsync run %s (%s) failed: %s",
        context.dagster_run.run_id,
        context.dagster_run.job_name,
        context.failure_event.message,
    )


def build_definitions(config: Config) -> dg.Definitions:
    assets: list[dg.AssetsDefinition] = []
    resources: dict[str, dg.ConfigurableResource] = {}
    jobs = []
    schedules = []
    for source in config.sources:
        plan = selected_resources(source, mapping_for(source.platform))
        produced = {resource for resources_ in plan.values() for resource in resources_}
        for stream, stream_resources in plan.items():
            assets.append(stream_asset(config, source, stream, stream_resources, produced))
        resources[secrets_key(source)] = secrets_for(config, source)
        job = dg.define_asset_job(f"{source.name}_sync", selection=dg.AssetSelection.groups(source.name))
        jobs.append(job)
        if source.schedule:
            schedules.append(_schedule(source, job))
    return dg.Definitions(
        assets=assets, resources=resources, jobs=jobs, schedules=schedules,
        sensors=[report_failed_runs],
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
