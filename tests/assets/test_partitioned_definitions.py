"""The prototype with shops as partitions (``pipelines.partitioned_definitions``): the
location of many shops holds one set of assets per platform, a run of one shop's partition
syncs that shop alone into the destination, and the schedule asks for the shops due."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import dagster as dg
import pytest

from assets.concurrency import SOURCE_TAG
from pipelines.engine.config import parse_config
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.partitioned_definitions import (
    DESTINATION_TAG,
    build_partitioned_definitions,
    due,
    source_env,
)
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.assets.celery_support import destination
from tests.assets.many_shops import many_shops

SHOPS = ("woo_a", "woo_b")


@pytest.mark.parametrize("partitioning", ["static", "dynamic"])
def test_many_shops_are_partitions_of_one_set_of_assets_per_platform(partitioning):
    config = parse_config(many_shops(60))
    defs = build_partitioned_definitions(config, partitioning)
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()

    groups = {key.path[0] for key in graph.get_all_asset_keys()}
    assert groups == {"woocommerce", "shopify", "prestashop", "magento"}
    assert len(graph.get_all_asset_keys()) < 60  # not a dozen per shop
    orders = graph.get(dg.AssetKey(["woocommerce", "orders"]))
    instance = dg.DagsterInstance.ephemeral()
    if partitioning == "dynamic":
        instance.add_dynamic_partitions("woocommerce_shops", ["shop_0000", "shop_0004"])
    assert "shop_0004" in orders.partitions_def.get_partition_keys(
        dynamic_partitions_store=instance)
    checks = {key.name for key in graph.asset_check_keys if key.asset_key == orders.key}
    assert {"run_rejections", "run_quality", "nothing_quarantined"} <= checks
    assert {job.name for job in defs.jobs} == {f"{g}_sync" for g in groups}


def test_with_dynamic_partitions_a_sensor_keeps_the_shops_of_the_file():
    config = parse_config(many_shops(8))
    defs = build_partitioned_definitions(config, "dynamic")
    sensor = defs.resolve_sensor_def("shopsync_shop_partitions")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("woocommerce_shops", ["shop_0000", "gone_shop"])

    result = sensor.evaluate_tick(dg.build_sensor_context(instance=instance))

    requests = {(type(r).__name__, r.partitions_def_name): r.partition_keys
                for r in result.dynamic_partitions_requests or []}
    assert requests[("AddDynamicPartitionsRequest", "woocommerce_shops")] == ["shop_0004"]
    assert requests[("DeleteDynamicPartitionsRequest", "woocommerce_shops")] == ["gone_shop"]
    assert requests[("AddDynamicPartitionsRequest", "magento_shops")] == [
        "shop_0003", "shop_0007"]


def test_a_run_reads_only_its_own_shops_variables():
    config = parse_config(many_shops(20))
    shop = config.source("shop_0000")  # WooCommerce, writing with a key of its own
    environ = {"WC_KEY_0": "k", "WC_SECRET_0": "s", "API_KEY_0": "a",
               "WC_KEY_4": "other shop's", "MARKETING_API_KEY": "the global key"}

    assert source_env(config, shop, environ) == {"WC_KEY_0": "k", "WC_SECRET_0": "s",
                                                 "API_KEY_0": "a"}


def test_the_schedule_asks_for_each_shop_whose_own_minute_it_is():
    config = parse_config(many_shops(60))
    defs = build_partitioned_definitions(config)
    schedule = defs.resolve_schedule_def("woocommerce_schedule")
    repository = defs.get_repository_def()
    woo = [s for s in config.sources if s.platform == "woocommerce"]
    seen: dict[str, int] = {}
    for minute in range(15):
        at = datetime(2026, 1, 1, 3, minute, tzinfo=UTC)
        context = dg.build_schedule_context(scheduled_execution_time=at,
                                             repository_def=repository)
        requests = list(schedule.evaluate_tick(context).run_requests or [])
        assert [r.partition_key for r in requests] == [s.name for s in due(config, woo, at)]
        for request in requests:
            assert request.tags[SOURCE_TAG] == request.partition_key
            assert DESTINATION_TAG in request.tags
            seen[request.partition_key] = seen.get(request.partition_key, 0) + 1
    # every shop once in its period of 15 minutes, not all in the same minute
    assert seen == {s.name: 1 for s in woo}


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
        "sources": sources})
    try:
        yield config, sandbox.client(key)
    finally:
        for shop in started:
            shop.stop()


@pytest.mark.parametrize("partitioning", ["static", "dynamic"])
def test_a_run_of_one_shops_partition_syncs_that_shop_alone(two_shops, partitioning):
    config, api = two_shops
    defs = build_partitioned_definitions(config, partitioning)
    job = defs.resolve_job_def("woocommerce_sync")
    instance = dg.DagsterInstance.ephemeral()
    if partitioning == "dynamic":  # as the sensor adds them
        instance.add_dynamic_partitions("woocommerce_shops", list(SHOPS))

    result = job.execute_in_process(instance=instance, partition_key="woo_a",
                                    tags={SOURCE_TAG: "woo_a"})

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
