"""The Dagster code location: what it defines, and a materialization through Dagster."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import dagster as dg
import httpx
import pytest

from pipelines.definitions import build_definitions, load_definitions
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.state import ItemStatus, Outcome, StateStore
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
    # not partitioned: a full sync leaves each asset materialized, nothing "missing"
    assert all(graph.get(key).partitions_def is None for key in graph.get_all_asset_keys())


def parents(defs: dg.Definitions, resource: str) -> set[str]:
    node = defs.resolve_asset_graph().get(dg.AssetKey(["woo", resource]))
    return {p.path[-1] for p in node.parent_keys}


def test_lineage_follows_every_reference_even_within_one_stream():
    defs = build_definitions(config_for())

    assert parents(defs, "orders") >= {"statuses", "carriers", "customers", "products",
                                       "vouchers", "addresses"}
    assert parents(defs, "variations") == {"products"}
    assert "products" in parents(defs, "images")
    assert parents(defs, "addresses") == {"customers"}
    assert parents(defs, "products") == {"categories"}


def test_steps_are_named_after_what_they_materialize():
    defs = build_definitions(config_for())
    steps = {node.name for node in defs.resolve_job_def("woo_sync").nodes}

    # the WooCommerce "coupons" stream materializes vouchers
    assert "woo__vouchers" in steps and "woo__coupons" not in steps
    assert "woo__products_variations_images" in steps


def test_each_source_has_jobs_and_schedules_that_run_unless_turned_off():
    defs = build_definitions(config_for())
    schedule = defs.resolve_schedule_def("woo_schedule")
    assert schedule.cron_schedule == "*/10 * * * *"
    assert defs.resolve_job_def("woo_sync") is not None
    assert defs.resolve_job_def("woo_reconcile") is not None
    # the default reconciliation: every 5 minutes, at a minute of the source's own
    reconcile = defs.resolve_schedule_def("woo_reconcile_schedule").cron_schedule
    assert re.fullmatch(r"[0-4]-59/5 \* \* \* \*", reconcile), reconcile
    automations = [*defs.schedules, *defs.sensors]
    assert {a.name for a in defs.sensors} == {"shopsync_failed_runs", "shopsync_alerts"}
    assert all(a.default_status.value == "RUNNING" for a in automations)

    config = config_for().model_dump(mode="json", exclude_none=True)
    stopped = build_definitions(parse_config({**config, "automation": "off"}))
    assert all(a.default_status.value == "STOPPED" for a in [*stopped.schedules, *stopped.sensors])


def test_everything_in_the_location_says_what_it_is():
    defs = build_definitions(config_for())
    graph = defs.resolve_asset_graph()
    undescribed = [key.to_user_string() for key in graph.get_all_asset_keys()
                   if not graph.get(key).description]
    undescribed += [f"check {key.name} of {key.asset_key.to_user_string()}"
                    for key in graph.asset_check_keys
                    if not graph.get_check_spec(key).description]
    undescribed += [job.name for job in defs.jobs if not job.description]
    undescribed += [s.name for s in defs.schedules if not s.description]
    undescribed += [s.name for s in defs.sensors if not s.description]
    assert undescribed == []


def test_secrets_are_environment_variables_never_values(monkeypatch):
    monkeypatch.setenv("T_DG_API_KEY", "abcd1234.do-not-show-me")
    defs = build_definitions(config_for())
    secrets = defs.resources["woo_secrets"]
    assert isinstance(secrets.api_key, dg.EnvVar)
    assert "do-not-show-me" not in repr(secrets)


def with_named_addresses(config, **changes):
    """``config`` with the ledger's URL and the webhook in variables the file names."""
    document = config.model_dump(mode="json", exclude_none=True)
    document.pop("state_url", None)
    return parse_config({**document, "state_url_env": "T_DG_STATE_URL",
                         "alerts": {"webhook_url_env": "T_DG_HOOK"}, **changes})


# Dagster's own snapshot reads a deprecated property of every schedule
@pytest.mark.filterwarnings("ignore:Property `ScheduleDefinition.environment_vars`")
def test_the_ui_shows_which_variable_holds_a_secret_never_its_value(monkeypatch):
    from dagster._core.remote_representation.external_data import (
        RepositorySnap,
        ResourceConfigEnvVarSnap,
    )

    values = {"T_DG_API_KEY": "abcd1234.do-not-show-key", "T_DG_WC_SECRET": "do-not-show-cs",
              "T_DG_STATE_URL": "postgresql+psycopg://u:do-not-show-pw@db.example.com/s",
              "T_DG_HOOK": "https://hooks.example.com/do-not-show-token"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    defs = build_definitions(with_named_addresses(config_for()))
    # what the UI's resource pages are built from
    snap = RepositorySnap.from_def(defs.get_repository_def())
    shown = {r.name: r for r in snap.resources}

    assert shown["state_database"].configured_values == {
        "url": ResourceConfigEnvVarSnap(name="T_DG_STATE_URL")}
    assert shown["alerts_webhook"].configured_values == {
        "url": ResourceConfigEnvVarSnap(name="T_DG_HOOK")}
    assert shown["woo_secrets"].configured_values["api_key"] == ResourceConfigEnvVarSnap(
        name="T_DG_API_KEY")
    # the typed parameters bind each to what uses it
    assert {j.job_name for j in shown["woo_secrets"].job_ops_using} == {
        "woo_sync", "woo_reconcile", "sync_all_sources"}
    assert len(shown["woo_secrets"].asset_keys_using) == 11
    assert set(shown["alerts_webhook"].sensors_using) == {"shopsync_alerts",
                                                          "shopsync_failed_runs"}
    assert "do-not-show" not in dg.serialize_value(snap)


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


def _run(config, job="woo_sync", window=None, **kwargs):
    """A run of one of the source's jobs, as a schedule or the Launchpad would start it."""
    run_config = {"resources": {"sync_window": {"config": window}}} if window else None
    return build_definitions(config).resolve_job_def(job).execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), run_config=run_config, **kwargs)


def materialized(result) -> dict[str, dict]:
    return {e.asset_key.to_user_string(): e.materialization.metadata
            for e in result.get_asset_materialization_events()}


def checks_of(result) -> dict[tuple[str, str], bool]:
    return {(c.asset_key.to_user_string(), c.check_name): c.passed
            for c in result.get_asset_check_evaluations()}


def evaluation(result, check: str):
    """The evaluation of the check named ``check`` (of one asset) in ``result``."""
    (found,) = [c for c in result.get_asset_check_evaluations() if c.check_name == check]
    return found


def test_a_sync_run_reports_what_it_did_apart_from_what_the_ledger_holds(live):
    result = _run(live)

    assert result.success
    orders = materialized(result)["woo/orders"]
    assert orders["this run"].value == "incremental sync from the stored cursor"
    assert orders["run: extracted"].value == (orders["run: accepted"].value
                                              + orders["run: quarantined"].value)
    assert orders["run: accepted"].value > 0
    states = {r.data["state"]: r.data["items"] for r in orders["items by state (ledger)"].records}
    assert states["accepted"] == orders["ledger: accepted"].value == orders["run: accepted"].value
    assert orders["cursor (stored)"].value.endswith(f"#{StateStore(live.state_url).get_cursor('woo', 'orders').record_id}")
    customers = materialized(result)["woo/customers"]
    reasons = {r.data["reason"] for r in customers["top reasons held back (ledger)"].records}
    assert "email: 'not-an-email' is not a well-formed email address" in reasons
    checks = checks_of(result)
    assert checks[("woo/orders", "run_rejections")] is True
    assert checks[("woo/customers", "nothing_quarantined")] is False  # the shop's bad email
    (held,) = [c for c in result.get_asset_check_evaluations()
               if (c.asset_key.path[-1], c.check_name) == ("customers", "nothing_quarantined")]
    assert held.metadata["one item's story"].text.startswith(
        "shopsync trace --source woo --resource customers '")
    assert checks[("woo/orders", "nothing_rejected")] is True
    assert checks[("woo/orders", "nothing_parked")] is True


def test_a_backfill_is_labelled_as_one_keeps_the_cursor_and_leaves_the_state_checks_true(live):
    _run(live)
    state = StateStore(live.state_url)
    cursor = state.get_cursor("woo", "orders")
    # ten days in the past, within the fake shop's generated history (which ends 2025-06-24)
    result = _run(live, window={"start": "2025-06-10", "end": "2025-06-19"})

    assert result.success
    assert state.get_cursor("woo", "orders") == cursor
    assert [r for r in state.recent_runs("woo", limit=50) if r.kind == "backfill"]
    orders = materialized(result)["woo/orders"]
    assert orders["this run"].value == ("backfill of changes 2025-06-10 to 2025-06-19"
                                        " (cursor left alone)")
    assert orders["run: extracted"].value > 0, "the window's orders were re-read"
    assert orders["cursor (stored)"].value.endswith(f"#{cursor.record_id}")
    assert orders["cursor (backfill reached)"].value.startswith("2025-06-1")
    # the backfill quarantined nothing new, but the bad email is still held back
    assert checks_of(result)[("woo/customers", "nothing_quarantined")] is False
    state.close()


def test_a_bad_backfill_window_fails_the_run_with_what_to_fix(live):
    result = _run(live, window={"start": "2025-06-19", "end": "2025-06-10"},
                  raise_on_error=False)

    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.user_failure_data
    assert "end 2025-06-10 is before start 2025-06-19" in failure.description


def test_the_reconciliation_report_shows_tables_and_reevaluates_the_state_checks(live):
    # the session sandbox applies writes at once: the read-back sees them
    _run(live)
    result = _run(live, job="woo_reconcile")

    assert result.success
    (metadata,) = materialized(result).values()
    assert metadata["visible"].value > 0
    states = {r.data["resource"]: r.data for r in metadata["items by state (ledger)"].records}
    assert states["orders"]["visible"] > 0 and states["customers"]["quarantined"] == 1
    assert {r.data["resource"] for r in metadata["completeness, all time"].records} >= {"orders"}
    report = metadata["report (Markdown)"].value
    assert "| orders |" in report and "Held back" in report
    checks = checks_of(result)
    assert checks[("woo/reconciliation", "run_visible_by_deadline")] is True
    assert checks[("woo/reconciliation", "run_audit_matches_destination")] is True
    assert "nothing audited yet" in evaluation(result, "run_audit_matches_destination").description
    # the ledger of the whole source as the reconciliation left it
    assert checks[("woo/reconciliation", "nothing_quarantined")] is False
    assert checks[("woo/reconciliation", "nothing_parked")] is True
    held = evaluation(result, "nothing_quarantined")
    assert {r.data["resource"] for r in held.metadata["quarantined by resource"].records} >= {
        "customers"}
    # the next reconciliation audits what this one confirmed
    audit = evaluation(_run(live, job="woo_reconcile"), "run_audit_matches_destination")
    assert audit.passed and audit.metadata["audited"].value > 0
    assert "visible items read back" in audit.description


def test_a_failed_step_leaves_the_checks_of_the_other_steps_assets_evaluated(live):
    shop = httpx.Client(base_url=f"{live.sources[0].connection.url}/__fake__",
                        auth=(os.environ["T_DG_WC_KEY"], os.environ["T_DG_WC_SECRET"]))
    with shop:
        shop.post("/orders/fail", json={"status": 401}).raise_for_status()
        result = _run(live, raise_on_error=False)

    assert not result.success
    (failed,) = {e.step_key for e in result.get_step_failure_events()}
    assert failed == "woo__carriers_orders"
    checks = checks_of(result)
    assert checks[("woo/products", "nothing_rejected")] is True  # evaluated in its own step
    assert checks[("woo/customers", "nothing_quarantined")] is False
    assert not [key for key in checks if key[0] in ("woo/orders", "woo/carriers")]


def test_a_failed_run_is_reported_with_its_first_failing_step_and_its_error(live, monkeypatch):
    monkeypatch.setenv("T_DG_API_KEY", "refused key, not of the pattern")
    defs = build_definitions(live)
    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_job_def("woo_sync").execute_in_process(instance=instance,
                                                                  raise_on_error=False)
    assert not result.success
    sensor = defs.resolve_sensor_def("shopsync_failed_runs")
    failure = next(e for e in result.all_events if e.event_type_value == "PIPELINE_FAILURE")
    context = dg.build_run_status_sensor_context(
        sensor_name=sensor.name, dagster_instance=instance, dagster_run=result.dagster_run,
        dagster_event=failure, resources=defs.resources).for_run_failure()
    logged: list[str] = []
    monkeypatch.setattr("assets.alerts.deliver",
                        lambda messages, url, log: logged.extend(messages))

    sensor(context)

    (message,) = logged
    assert "failed — step woo__" in message
    assert "failed: ClientConfigError: the API key is malformed" in message
    assert "refused key, not of the pattern" not in message


def test_the_alerts_sensor_reports_newly_parked_items(live, tmp_path):
    from pipelines.engine.state import ItemStatus

    state = StateStore(live.state_url)
    state.record("woo", "orders", [])
    from pipelines.engine.state import Outcome

    state.record("woo", "orders", [Outcome("o1", "h", ItemStatus.ACCEPTED, payload={"a": 1})])
    state.mark("woo", "orders", ["o1"], ItemStatus.PARKED)
    defs = build_definitions(live)
    sensor = defs.resolve_sensor_def("shopsync_alerts")
    context = dg.build_sensor_context(resources=defs.resources)  # as the daemon gives them

    first = sensor(context)
    assert "1 alert" in first.skip_message
    assert "nothing to report" in sensor(dg.build_sensor_context(
        cursor=context.cursor, resources=defs.resources)).skip_message
    state.close()


def test_the_ledger_and_the_webhook_come_from_the_variables_the_file_names(live, tmp_path,
                                                                           monkeypatch):
    url = f"sqlite:///{tmp_path / 'named.db'}"
    monkeypatch.setenv("T_DG_STATE_URL", url)
    monkeypatch.setenv("T_DG_HOOK", "https://hooks.example.com/from-the-variable")
    config = with_named_addresses(live)

    assert _run(config).success
    with StateStore(url) as state:
        assert state.get_cursor("woo", "orders") is not None
        state.record("woo", "orders", [Outcome("o1", "h", ItemStatus.ACCEPTED, payload={})])
        state.mark("woo", "orders", ["o1"], ItemStatus.PARKED)  # an alert to post
    posted: list[str | None] = []
    monkeypatch.setattr("assets.alerts.deliver", lambda messages, url, log: posted.append(url))
    defs = build_definitions(config)
    defs.resolve_sensor_def("shopsync_alerts")(dg.build_sensor_context(resources=defs.resources))
    assert posted == ["https://hooks.example.com/from-the-variable"]
