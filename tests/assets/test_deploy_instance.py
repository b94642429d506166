"""``deploy/dagster.yaml``, loaded as a production instance would: its storage is PostgreSQL,
its queue and limits are the ones it declares, and a job of the demo configuration run
through it is kept there — the run, its tags and its materializations, read back from the
instance — with the ledger in a schema of its own on the same server.

Each test gets two fresh schemas of the test PostgreSQL: Dagster's (through ``PGOPTIONS``,
which libpq reads, as the yaml's header says) and the state store's (in ``state_url``)."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.run_coordinator import QueuedRunCoordinator
from dagster_postgres import (
    PostgresEventLogStorage,
    PostgresRunStorage,
    PostgresScheduleStorage,
)
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from assets.concurrency import DESTINATION_TAG, SOURCE_TAG, destination_pool
from pipelines.definitions import build_definitions
from pipelines.demo import API_KEY_ENV, DEMO_SOURCE, demo_config, demo_env
from pipelines.engine.config import parse_config
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.support import RunningSandbox, new_key

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "dagster.yaml"
STATE_ENV = "T_DEPLOY_STATE_URL"


@pytest.fixture
def schemas(postgres_admin: Engine) -> Iterator[tuple[str, str]]:
    """Dagster's schema and the state store's, dropped after the test."""
    names = (f"test_dagster_{secrets.token_hex(5)}", f"test_state_{secrets.token_hex(5)}")
    with postgres_admin.connect() as conn:
        for name in names:
            conn.execute(text(f'CREATE SCHEMA "{name}"'))
    yield names
    with postgres_admin.connect() as conn:
        for name in names:
            conn.execute(text(f'DROP SCHEMA "{name}" CASCADE'))


@pytest.fixture
def instance(postgres_admin: Engine, schemas: tuple[str, str], tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[dg.DagsterInstance]:
    """The instance of a DAGSTER_HOME holding deploy/dagster.yaml as it is, its connection
    from the environment only."""
    url = postgres_admin.url
    for name, value in {"DAGSTER_PG_HOST": url.host, "DAGSTER_PG_PORT": url.port,
                        "DAGSTER_PG_USER": url.username, "DAGSTER_PG_PASSWORD": url.password,
                        "DAGSTER_PG_DB": url.database,
                        "PGOPTIONS": f"-csearch_path={schemas[0]}"}.items():
        monkeypatch.setenv(name, str(value))
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(DEPLOY, home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    loaded = dg.DagsterInstance.get()
    yield loaded
    loaded.dispose()


def test_the_deployment_instance_queues_runs_with_the_limits_it_declares(
    instance: dg.DagsterInstance, postgres_admin: Engine, schemas: tuple[str, str],
) -> None:
    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
    concurrency = instance.get_concurrency_config()
    queue = concurrency.run_queue_config
    assert queue is not None and queue.max_concurrent_runs == 10
    assert queue.tag_concurrency_limits == [
        {"key": SOURCE_TAG, "value": {"applyLimitPerUniqueValue": True}, "limit": 1},
        {"key": DESTINATION_TAG, "value": {"applyLimitPerUniqueValue": True}, "limit": 4}]
    assert concurrency.pool_config.default_pool_limit == 4
    assert instance.run_monitoring_enabled
    assert not instance.telemetry_enabled
    with postgres_admin.connect() as conn:  # Dagster's tables went to the schema PGOPTIONS names
        tables = conn.scalars(text("SELECT table_name FROM information_schema.tables"
                                   " WHERE table_schema = :s"), {"s": schemas[0]}).all()
    assert {"runs", "event_logs", "jobs", "concurrency_limits"} <= set(tables)


def test_a_job_of_the_demo_runs_through_the_deployment_instance_and_stays_in_postgresql(
    instance: dg.DagsterInstance, postgres_admin: Engine, schemas: tuple[str, str],
    sandbox: RunningSandbox, monkeypatch: pytest.MonkeyPatch,
) -> None:
    state_url = make_url(postgres_admin.url).update_query_dict(
        {"options": f"-csearch_path={schemas[1]}"}).render_as_string(hide_password=False)
    for name, value in {**demo_env(), API_KEY_ENV: new_key(), STATE_ENV: state_url}.items():
        monkeypatch.setenv(name, value)
    shop = start_in_thread("--orders", "5", "--customers", "3", "--products", "3")
    try:
        demo = demo_config(sandbox.base_url, shop.root).model_dump(mode="json",
                                                                   exclude_none=True)
        config = parse_config({**demo, "state_url_env": STATE_ENV})  # the URL from the env
        statuses = dg.AssetKey([DEMO_SOURCE, "statuses"])
        job = build_definitions(config).resolve_job_def(f"{DEMO_SOURCE}_sync")
        result = job.execute_in_process(instance=instance, asset_selection=[statuses])
    finally:
        shop.stop()
    assert result.success

    run = instance.get_run_by_id(result.run_id)
    assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
    assert run.tags[SOURCE_TAG] == DEMO_SOURCE
    materialized = instance.get_latest_materialization_event(statuses)
    assert materialized is not None and materialized.run_id == result.run_id
    pool = destination_pool(config.destination)
    assert pool == f"shopsync_destination_{API_KEY_ENV.lower()}"
    assert job.get_subset(asset_selection={statuses}).nodes[0].definition.pool == pool
    # the step took a slot of its destination's pool, made with the default limit
    info = instance.event_log_storage.get_concurrency_info(pool)
    assert info.slot_count == 4 and info.active_slot_count == 0
    with StateStore(state_url) as state:  # the ledger, in its own schema
        assert state.counts(DEMO_SOURCE)["statuses"].get(ItemStatus.ACCEPTED.value, 0) > 0
