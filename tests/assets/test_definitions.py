"""The Dagster code location: what it defines, and a materialization through Dagster."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime

import dagster as dg
import pytest

from pipelines.definitions import build_definitions, load_definitions
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.state import StateStore
from sandbox.shops.woocommerce.launch import start_in_thread


def config_for(base_url="http://127.0.0.1:9/v1", shop_url="http://127.0.0.1:9", state_url=None):
    return parse_config({
        "destination": {"base_url": base_url, "api_key_env": "T_DG_API_KEY"},
        "state_url": state_url,
        "sources": [{
            "name": "woo", "platform": "woocommerce",
            "connection": {"url": shop_url, "key_env": "T_DG_WC_KEY", "secret_env": "T_DG_WC_SECRET"},
            "schedule": "*/10 * * * *", "history_start": "2025-01-01", "lookback_seconds": 0,
        }],
    })


def test_the_definitions_load_with_one_asset_per_source_and_resource():
    defs = build_definitions(config_for())
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}

    assert keys == {f"woo/{r}" for r in (
        "statuses", "categories", "customers", "addresses", "products", "variations", "images",
        "vouchers", "carriers", "orders", "reconciliation")}
    parents = {p.to_user_string() for p in graph.get(dg.AssetKey(["woo", "orders"])).parent_keys}
    assert parents == {"woo/statuses", "woo/customers", "woo/products", "woo/vouchers"}
    products = graph.get(dg.AssetKey(["woo", "products"]))
    assert {p.to_user_string() for p in products.parent_keys} == {"woo/categories"}
    assert isinstance(products.partitions_def, dg.DailyPartitionsDefinition)
    assert products.backfill_policy == dg.BackfillPolicy.single_run()


def test_each_source_has_a_job_a_schedule_and_failed_runs_are_reported():
    defs = build_definitions(config_for())
    schedule = defs.resolve_schedule_def("woo_schedule")
    assert schedule.cron_schedule == "*/10 * * * *"
    assert defs.resolve_job_def("woo_sync") is not None
    assert defs.resolve_job_def("woo_reconcile") is not None
    assert defs.resolve_schedule_def("woo_reconcile_schedule").cron_schedule == "*/5 * * * *"
    assert defs.resolve_sensor_def("shopsync_failed_runs") is not None
    assert defs.resolve_sensor_def("shopsync_alerts") is not None


def test_secrets_are_environment_variables_never_values(monkeypatch):
    monkeypatch.setenv("T_DG_API_KEY", "abcd1234.do-not-show-me")
    defs = build_definitions(config_for())
    secrets = defs.resources["woo_secrets"]
    assert isinstance(secrets.api_key, dg.EnvVar)
    assert "do-not-show-me" not in repr(secrets)


def test_the_workspace_loads_the_location_from_the_config_file(tmp_path):
    path = tmp_path / "shops.yaml"
    path.write_text(
        "sources:\n  - name: from_file\n    platform: woocommerce\n"
        "    connection: {url: http://127.0.0.1:9, key_env: K, secret_env: S}\n"
    )
    env = {**os.environ, "SHOPSYNC_CONFIG": str(path)}
    env.pop("SHOPSYNC_DEMO_PLATFORM", None)
    # Dagster's own loader, as `dagster dev -m pipelines.definitions` uses it
    done = subprocess.run([sys.executable, "-m", "dagster", "definitions", "validate", "-m",
                           "pipelines.definitions"], capture_output=True, check=False,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr

    graph = load_definitions(env).resolve_asset_graph()
    assert "from_file/addresses" in {k.to_user_string() for k in graph.get_all_asset_keys()}


def test_a_misspelt_config_path_fails_the_location_naming_the_file_not_the_demo(tmp_path):
    typo = tmp_path / "shosp.yaml"
    with pytest.raises(ConfigError) as caught:
        load_definitions({"SHOPSYNC_CONFIG": str(typo)})
    assert f"no configuration file at {typo}" in str(caught.value)
    assert "shopsync dev" in str(caught.value)  # how to get the demo, when that was meant


def test_without_a_file_the_location_fails_unless_the_demo_is_asked_for(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="no configuration file at shops.yaml"):
        load_definitions({})

    demo = load_definitions({"SHOPSYNC_DEMO_PLATFORM": "woocommerce"})  # as `shopsync dev` sets
    keys = {k.to_user_string() for k in demo.resolve_asset_graph().get_all_asset_keys()}
    assert "demo_shop/orders" in keys


def test_an_unreadable_or_invalid_file_fails_the_location_naming_it(tmp_path):
    binary = tmp_path / "shops.yaml"
    binary.write_bytes(b"sources:\n  - name: caf\xe9\n")
    with pytest.raises(ConfigError) as caught:
        load_definitions({"SHOPSYNC_CONFIG": str(binary)})
    assert str(binary) in str(caught.value)
    assert "not UTF-8" in str(caught.value)
    with pytest.raises(ConfigError, match="cannot read .*: Is a directory"):
        load_definitions({"SHOPSYNC_CONFIG": str(tmp_path)})


@pytest.fixture
def live(sandbox, fresh_key, tmp_path, monkeypatch):
    shop = start_in_thread("--orders", "30", "--customers", "10", "--products", "5")
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    monkeypatch.setenv("T_DG_API_KEY", fresh_key())
    monkeypatch.setenv("T_DG_WC_KEY", shop.key)
    monkeypatch.setenv("T_DG_WC_SECRET", shop.secret)
    yield config_for(sandbox.base_url, shop.root, state_url)
    shop.stop()


def _materialize(config, reconciliation=False, **kwargs):
    defs = build_definitions(config)
    chosen = [a for a in defs.assets
              if any(k.path[-1] == "reconciliation" for k in a.keys) == reconciliation]
    return dg.materialize(chosen, resources=dict(defs.resources),
                          instance=dg.DagsterInstance.ephemeral(), **kwargs)


def test_a_materialization_reports_what_happened_to_the_items(live):
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    result = _materialize(live, partition_key=today)

    assert result.success
    events = {e.asset_key.to_user_string(): e.materialization.metadata
              for e in result.get_asset_materialization_events()}
    orders = events["woo/orders"]
    assert orders["extracted"].value == orders["accepted"].value + orders["quarantined"].value
    assert orders["accepted"].value > 0
    assert orders["mode"].value == "sync"
    assert "| pending | visible |" in orders["items by state"].value
    reasons = {r.data["reason"] for r in events["woo/customers"]["top reasons held back"].records}
    assert "email: 'not-an-email' is not a well-formed email address" in reasons
    assert "cursor" in orders and "records/s" in orders
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed
              for c in result.get_asset_check_evaluations()}
    assert checks[("woo/orders", "no_rejections")] is True
    assert checks[("woo/customers", "no_quarantine")] is False  # the shop's bad email


def test_a_partition_range_in_the_past_is_a_backfill_that_keeps_the_cursor(live):
    today = datetime.now(UTC)
    _materialize(live, partition_key=today.strftime("%Y-%m-%d"))
    state = StateStore(live.state_url)
    cursor = state.get_cursor("woo", "orders")
    # ten days in the past, within the fake shop's generated history (which ends 2025-06-24)
    result = _materialize(live, tags={"dagster/asset_partition_range_start": "2025-06-10",
                                      "dagster/asset_partition_range_end": "2025-06-19"})

    assert result.success
    assert state.get_cursor("woo", "orders") == cursor
    runs = [r for r in state.recent_runs("woo", limit=50) if r.kind == "backfill"]
    assert runs, "the range ran as a backfill"
    orders = [e.materialization.metadata for e in result.get_asset_materialization_events()
              if e.asset_key.to_user_string() == "woo/orders"]
    assert sum(m["extracted"].value for m in orders) > 0, "the window's orders were re-read"
    state.close()


def test_the_reconciliation_report_confirms_visibility_and_renders_markdown(live):
    # the session sandbox applies writes at once: the read-back sees them
    _materialize(live, partition_key=datetime.now(UTC).strftime("%Y-%m-%d"))
    result = _materialize(live, reconciliation=True)

    assert result.success
    (event,) = result.get_asset_materialization_events()
    metadata = event.materialization.metadata
    assert metadata["visible"].value > 0
    report = metadata["report"].value
    assert "| orders |" in report and "Reconciliation" in report
    assert "Held back" in report  # the shop's bad email and negative price
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks == {"nothing_parked": True, "visible_in_time": True,
                      "destination_matches_ledger": True}


def test_the_alerts_sensor_reports_newly_parked_items(live, tmp_path):
    from pipelines.engine.state import ItemStatus

    state = StateStore(live.state_url)
    state.record("woo", "orders", [])
    from pipelines.engine.state import Outcome

    state.record("woo", "orders", [Outcome("o1", "h", ItemStatus.ACCEPTED, payload={"a": 1})])
    state.mark("woo", "orders", ["o1"], ItemStatus.PARKED)
    sensor = build_definitions(live).resolve_sensor_def("shopsync_alerts")
    context = dg.build_sensor_context()

    first = sensor(context)
    assert "1 alert" in first.skip_message
    assert "nothing to report" in sensor(dg.build_sensor_context(cursor=context.cursor)).skip_message
    state.close()
