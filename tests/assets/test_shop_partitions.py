"""``layout: shop_partitions``: a location of many shops holds one set of assets per
platform, partitioned by shop; 500 shops load whole, each shop has its partition of its
group's jobs, the schedules ask for the shops whose own minute it is, and a run of one
shop's partition syncs (and reconciles) that shop alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import dagster as dg
import pytest

from assets.concurrency import DESTINATION_TAG, SOURCE_TAG
from assets.shop_partitions import due, platform_groups, source_env
from pipelines.definitions import build_definitions
from pipelines.engine.config import parse_config
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.assets.celery_support import destination
from tests.assets.many_shops import many_shops

SHOPS = ("woo_a", "woo_b")
#: the size the layout is for: built whole here (a few seconds), where a group per shop
#: would take a minute
MANY = 500


def partitioned(document: dict) -> dict:
    return {**document, "layout": "shop_partitions"}


@pytest.fixture(scope="module")
def location():
    config = parse_config(partitioned(many_shops(MANY)))
    defs = build_definitions(config)
    return config, defs, defs.get_repository_def()


def test_five_hundred_shops_are_partitions_of_one_set_of_assets_per_platform(location):
    config, defs, repository = location
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()

    assert {key.path[0] for key in graph.get_all_asset_keys()} == {
        "woocommerce", "shopify", "prestashop", "magento"}
    assert len(graph.get_all_asset_keys()) < 60  # not a dozen per shop
    orders = graph.get(dg.AssetKey(["woocommerce", "orders"]))
    woo = [s.name for s in config.sources if s.platform == "woocommerce"]
    assert orders.partitions_def.get_partition_keys() == woo
    checks = {key.name for key in graph.asset_check_keys if key.asset_key == orders.key}
    assert {"run_rejections", "run_quality", "nothing_quarantined"} <= checks
    report = graph.get(dg.AssetKey(["woocommerce", "reconciliation"]))
    assert report.partitions_def == orders.partitions_def


def test_every_shop_has_its_partition_of_its_groups_jobs_and_schedules(location):
    config, _, repository = location
    groups = platform_groups(config)

    jobs = {job.name for job in repository.get_all_jobs()}
    assert {f"{g}_{kind}" for g in groups for kind in ("sync", "reconcile")} <= jobs
    schedules = {s.name for s in repository.schedule_defs}
    assert {f"{g}{kind}" for g in groups for kind in ("_schedule", "_reconcile_schedule")} == (
        schedules)
    for group, sources in groups.items():
        for kind in ("sync", "reconcile"):
            job = repository.get_job(f"{group}_{kind}")
            assert job.partitions_def.get_partition_keys() == [s.name for s in sources]
    assert sum(len(s) for s in groups.values()) == MANY
    # no resource per shop: a run reads its own shop's variables when it starts
    assert not any(key.endswith("_secrets") for key in repository.get_top_level_resources())


@pytest.mark.parametrize(("kind", "period"), [("sync", 15), ("reconcile", 5)])
def test_the_schedules_ask_for_each_shop_once_in_its_period_spread(location, kind, period):
    config, _, repository = location
    suffix = "_schedule" if kind == "sync" else "_reconcile_schedule"
    crons = {s.name: (config.schedule_for(s) if kind == "sync"
                      else config.reconciliation_schedule_for(s)) for s in config.sources}
    seen: Counter[str] = Counter()
    per_minute = Counter[int]()
    for group, sources in platform_groups(config).items():
        schedule = repository.get_schedule_def(f"{group}{suffix}")
        for minute in range(period):
            at = datetime(2026, 1, 1, 3, minute, tzinfo=UTC)
            context = dg.build_schedule_context(scheduled_execution_time=at,
                                                 repository_def=repository)
            requests = list(schedule.evaluate_tick(context).run_requests or [])
            assert [r.partition_key for r in requests] == [
                s.name for s in due(crons, sources, at)]
            for request in requests:
                assert request.tags[SOURCE_TAG] == request.partition_key
                assert request.tags[DESTINATION_TAG] == config.destination_for(
                    config.source(request.partition_key)).api_key_env
            seen.update(r.partition_key for r in requests)
            per_minute[minute] += len(requests)
    assert seen == {s.name: 1 for s in config.sources}  # every shop once in its period …
    assert max(per_minute.values()) <= -(-MANY // period)  # … by minutes of its share


def test_a_run_reads_only_its_own_shops_variables():
    config = parse_config(partitioned(many_shops(20)))
    shop = config.source("shop_0000")  # WooCommerce, writing with a key of its own
    environ = {"WC_KEY_0": "k", "WC_SECRET_0": "s", "API_KEY_0": "a",
               "WC_KEY_4": "other shop's", "MARKETING_API_KEY": "the global key"}

    assert source_env(config, shop, environ) == {"WC_KEY_0": "k", "WC_SECRET_0": "s",
                                                 "API_KEY_0": "a"}


@pytest.fixture
def two_shops(sandbox, fresh_key, tmp_path, monkeypatch) -> Iterator[tuple]:
    started = [start_in_thread("--orders", "20", "--customers", "8", "--products", "4")
               for _ in SHOPS]
    key = fresh_key()
    monkeypatch.setenv("T_PT_API_KEY", key)
    sources = []
    for name, shop in zip(SHOPS, started, strict=True):
        monkeypatch.setenv(f"T_PT_{name.upper()}_KEY", shop.key)
        monkeypatch.setenv(f"T_PT_{name.upper()}_SECRET", shop.secret)
        sources.append({"name": name, "platform": "woocommerce",
                        "connection": {"url": shop.root, "key_env": f"T_PT_{name.upper()}_KEY",
                                       "secret_env": f"T_PT_{name.upper()}_SECRET"},
                        "data_source": {"label": name}, "history_start": "2025-01-01",
                        "lookback_seconds": 0})
    config = parse_config({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_PT_API_KEY"},
        "state_url": f"sqlite:///{tmp_path / 'state.db'}", "automation": False,
        "layout": "shop_partitions", "sources": sources})
    try:
        yield config, sandbox.client(key)
    finally:
        for shop in started:
            shop.stop()


def test_a_run_of_one_shops_partition_syncs_and_reconciles_that_shop_alone(two_shops):
    config, api = two_shops
    defs = build_definitions(config)
    instance = dg.DagsterInstance.ephemeral()

    result = defs.resolve_job_def("woocommerce_sync").execute_in_process(
        instance=instance, partition_key="woo_a")

    assert result.success
    materialized = {(e.asset_key.to_user_string(), e.partition)
                    for e in result.get_asset_materialization_events()}
    assert ("woocommerce/orders", "woo_a") in materialized
    assert {partition for _, partition in materialized} == {"woo_a"}
    checks = {(c.asset_key.to_user_string(), c.check_name): c.passed
              for c in result.get_asset_check_evaluations()}
    assert checks[("woocommerce/orders", "run_rejections")] is True
    # each check is evaluated for the shop's partition (the UI keeps one status per shop)
    assert {c.partition for c in result.get_asset_check_evaluations()} == {"woo_a"}
    at_destination = destination(api)
    assert {label for label, _ in at_destination} == {"woo_a"}
    with StateStore(config.state_url) as state:
        orders = state.counts("woo_a", "orders")["orders"]
        assert state.counts("woo_b") == {}
    sent = orders.get(ItemStatus.ACCEPTED, 0) + orders.get(ItemStatus.VISIBLE, 0)
    assert len(at_destination[("woo_a", "orders")]) == sent > 0

    reconciled = defs.resolve_job_def("woocommerce_reconcile").execute_in_process(
        instance=instance, partition_key="woo_a")

    assert reconciled.success
    (report,) = reconciled.get_asset_materialization_events()
    assert (report.asset_key.to_user_string(), report.partition) == (
        "woocommerce/reconciliation", "woo_a")
    assert report.materialization.metadata["checked"].value >= sent  # orders and the rest
    assert {c.partition for c in reconciled.get_asset_check_evaluations()} == {"woo_a"}
    with StateStore(config.state_url) as state:
        assert state.counts("woo_b") == {}
