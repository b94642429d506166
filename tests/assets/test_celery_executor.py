"""The job syncing every source, on the celery executor: three shops, two worker processes,
and the same destination and ledger as the same job in process."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from assets.execution import ALL_SOURCES_JOB, SOURCES_TAG
from pipelines.definitions import build_definitions
from pipelines.demo_specs import demo_spec
from pipelines.engine.config import parse_config
from tests.assets.celery_support import (
    ROOT,
    celery_workers,
    dagster_home,
    destination,
    ledger,
    redis_url,
)

PLATFORMS = ("woocommerce", "prestashop", "magento")
#: what each shop syncs: a few steps per shop, three shops' steps ready at once for the two
#: workers (every stream runs the same step code; the other resources add steps, not paths)
RESOURCES = ("customers", "orders")
BROKER_ENV = "SHOPSYNC_TEST_CELERY_BROKER"


@pytest.fixture
def shops() -> Iterator[dict[str, str]]:
    """Three fake shops, served in threads of the test: source name -> address."""
    started: dict[str, Any] = {}
    try:
        for name in PLATFORMS:
            launch = importlib.import_module(f"sandbox.shops.{name}.launch")
            started[f"{name}_shop"] = launch.start_in_thread(*demo_spec(name).sizes(30, 10, 6))
        yield {source: shop.root for source, shop in started.items()}
    finally:
        for shop in started.values():
            shop.stop()


def configuration(shops: dict[str, str], base_url: str, key_env: str, state_url: str,
                  execution: dict[str, Any]) -> dict[str, Any]:
    return {
        "destination": {"base_url": base_url, "api_key_env": key_env},
        "state_url": state_url, "automation": False, "execution": execution,
        "sources": [{"name": source, "platform": source.removesuffix("_shop"),
                     "connection": demo_spec(source.removesuffix("_shop")).connection(url),
                     "data_source": {"label": source}, "lookback_seconds": 0,
                     "resources": list(RESOURCES)}
                    for source, url in shops.items()],
    }


def fresh_destination(sandbox: Any, key: str, shops: dict[str, str]) -> None:
    """A new shop of the sandbox with the sources' data sources made in one order: their
    ids, which the items carry (and the ledger's hashes cover), are the same in every run."""
    for label in shops:
        sandbox.client(key).post("/data-sources", json={"label": label}).raise_for_status()


def secrets_env() -> dict[str, str]:
    return {k: v for name in PLATFORMS for k, v in demo_spec(name).env.items()}


def run_on_celery(config: dict[str, Any], env: dict[str, str], broker: str,
                  tmp: Path) -> tuple[dg.DagsterInstance, str, dict[int, str]]:
    """``dagster job execute`` of the job in its own process, its steps on two workers."""
    (tmp / "shops.yaml").write_text(yaml.safe_dump(config))
    home = dagster_home(tmp / "dagster_home")
    env = {**env, "SHOPSYNC_CONFIG": str(tmp / "shops.yaml"), "DAGSTER_HOME": str(home)}
    names = [f"w{i}-{uuid.uuid4().hex[:6]}" for i in (1, 2)]
    with celery_workers(names, env, broker, tmp / "workers.log") as workers:
        done = subprocess.run(
            [sys.executable, "-m", "dagster", "job", "execute", "-m", "pipelines.definitions",
             "-a", "defs", "-j", ALL_SOURCES_JOB],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=480)
        pids = workers.pids
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:], workers.output())
    instance = dg.DagsterInstance.from_config(str(home))
    [run] = instance.get_runs()
    return instance, run.run_id, pids


def wall_seconds(instance: dg.DagsterInstance, run_id: str) -> float:
    record = instance.get_run_record_by_id(run_id)
    assert record is not None and record.start_time and record.end_time
    return record.end_time - record.start_time


@pytest.mark.timeout(900)  # above the bounds inside: two runs of the job on a busy machine
def test_the_job_of_every_source_on_celery_workers_leaves_what_it_leaves_in_process(
        sandbox, fresh_key, shops, tmp_path, monkeypatch):
    queue = f"shopsync-test-{uuid.uuid4().hex[:8]}"  # no other run's workers take its steps
    with redis_url(tmp_path / "redis") as broker:
        celery_key = fresh_key()
        fresh_destination(sandbox, celery_key, shops)
        env = {**os.environ, **secrets_env(), "CELERY_RUN_KEY": celery_key, BROKER_ENV: broker}
        config = configuration(
            shops, sandbox.base_url, "CELERY_RUN_KEY", f"sqlite:///{tmp_path / 'celery.db'}",
            {"executor": "celery", "broker_url_env": BROKER_ENV, "queue": queue})
        instance, run_id, worker_pids = run_on_celery(config, env, broker, tmp_path)

    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
    assert run.tags[SOURCES_TAG] == "all"
    starts = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
    step_pids = {entry.dagster_event.pid for entry in starts if entry.dagster_event}
    # every step ran in a worker, and both workers took steps
    assert step_pids == set(worker_pids), (step_pids, worker_pids)
    # and the workers' own names are on the engine's events ("Executing steps … in celery
    # worker")
    engine = [entry.dagster_event.engine_event_data.metadata for entry in
              instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
              if entry.dagster_event]
    hosts = {str(meta["Celery worker"].value) for meta in engine if "Celery worker" in meta}
    assert {host.split("@")[0] for host in hosts} == set(worker_pids.values())
    assert {entry.step_key for entry in starts} == {
        node.name for node in build_definitions(parse_config(config))
        .resolve_job_def(ALL_SOURCES_JOB).nodes}

    # the same job in process, into a fresh shop of the sandbox with its own ledger
    local_key = fresh_key()
    fresh_destination(sandbox, local_key, shops)
    for variable, value in {**secrets_env(), "LOCAL_RUN_KEY": local_key}.items():
        monkeypatch.setenv(variable, value)
    local = configuration(shops, sandbox.base_url, "LOCAL_RUN_KEY",
                          f"sqlite:///{tmp_path / 'local.db'}", {})
    job = build_definitions(parse_config(local)).resolve_job_def(ALL_SOURCES_JOB)
    assert job.executor_def is dg.in_process_executor
    local_instance = dg.DagsterInstance.ephemeral()
    result = job.execute_in_process(instance=local_instance)
    assert result.success
    # the figure, not a bound: it depends on the machine's load
    print(f"{ALL_SOURCES_JOB}, {len(shops)} shops: in process"
          f" {wall_seconds(local_instance, result.run_id):.1f} s, on celery (2 workers)"
          f" {wall_seconds(instance, run_id):.1f} s")

    celery_items = destination(sandbox.client(celery_key))
    local_items = destination(sandbox.client(local_key))
    assert {label for label, _ in celery_items} == set(shops)
    assert celery_items.keys() == local_items.keys()
    for where, items in local_items.items():
        assert celery_items[where] == items, where
    # nothing sent twice: the sandbox accepted as many writes per resource in both shops
    stats = [sandbox.client(key).get(sandbox.root + "/_sandbox/stats").json()["data"]["writes"]
             for key in (celery_key, local_key)]
    assert stats[0] == stats[1]
    assert ledger(config["state_url"], list(shops)) == ledger(local["state_url"], list(shops))
