"""The job that syncs every configured source in one run, on the executor the configuration's
``execution`` section chooses.

In process by default, like the per-source jobs: a step is seconds of work, and a process per
step would pay the interpreter's start and the great-expectations import (~4 s) again. With
``executor: celery`` (dagster-celery, the ``deploy`` extra) each step is a task on a broker
that workers (``python -m pipelines.worker``) take: the run only orchestrates. The broker's
and result backend's URLs are read by Dagster from the variables the configuration names
(``{"env": VAR}``), when the run starts: they never appear in the run's configuration or the
UI.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from pipelines.engine.config import ConfigError, Execution

#: its name cannot be a source's job: those end in ``_sync`` or ``_reconcile``
ALL_SOURCES_JOB = "sync_all_sources"
#: the run tag of the job syncing every source (a source's own jobs carry ``shopsync/source``)
SOURCES_TAG = "shopsync/sources"


def executor_for(execution: Execution) -> dg.ExecutorDefinition:
    """The executor ``execution`` asks for; celery's only when dagster-celery is installed."""
    if execution.executor == "in_process":
        return dg.in_process_executor
    try:
        from dagster_celery import celery_executor
    except ImportError:
        raise ConfigError(["execution.executor: celery needs dagster-celery — install it with"
                           " pip install 'shopsync[deploy]'"]) from None
    broker = execution.broker_url_env
    assert broker is not None  # the model requires it with celery
    return celery_executor.configured(
        {"broker": {"env": broker}, "backend": {"env": execution.backend_url_env or broker},
         # the run's steps go to this queue, the one the workers listen on
         "config_source": {"task_default_queue": execution.queue}},
        name="celery",
    )


def all_sources_job(execution: Execution,
                    synced: Sequence[dg.AssetKey]) -> dg.UnresolvedAssetJobDefinition:
    """One run syncing every source's assets (not their reconciliation reports)."""
    where = ("in its run's process" if execution.executor == "in_process"
             else f"on celery workers (queue {execution.queue})")
    return dg.define_asset_job(
        ALL_SOURCES_JOB, selection=dg.AssetSelection.assets(*synced),
        executor_def=executor_for(execution), tags={SOURCES_TAG: "all"},
        description="Sync every configured source in one run, each step"
                    f" {where} (`execution.executor`). A source's own `<source>_sync` job"
                    " does the same for one source.")
