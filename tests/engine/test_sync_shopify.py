"""The sync engine end to end: a fake Shopify shop → the sandbox, over real HTTP, with a real
SQLite state store. Orders come through a bulk operation (the window holds more than the
source's ``bulk_threshold``), the other streams through paged queries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from connectors.sources.shopify import ShopifyConnector
from pipelines.engine.config import ConfigError
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.state import ItemStatus
from pipelines.engine.sync import SETTLE
from sandbox.shops.shopify.launch import RunningFakeShopify, start_in_thread
from tests.engine.support import (
    EngineSetup,
    EveryPlatform,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "shop"
OPTIONS = {"bulk_threshold": 40, "bulk_poll_interval": 0.05}


@pytest.fixture
def shop() -> Iterator[RunningFakeShopify]:
    running = start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                              "--seed", "5", "--bucket-size", "50000", "--restore-rate", "50000",
                              "--bulk-latency", "0.05")
    yield running
    running.stop()


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShopify


def make_setup(engine_setup: MakeSetup, shop: RunningFakeShopify, **source: Any) -> Setup:
    return engine_setup(Setup, {
        "name": SOURCE, "platform": "shopify",
        "connection": {"url": shop.root, "token_env": "T_SHOPIFY_TOKEN", "options": OPTIONS},
        **source,
    }, env={"T_SHOPIFY_TOKEN": shop.token}, shop=shop)


@pytest.fixture
def setup(engine_setup: MakeSetup, shop: RunningFakeShopify) -> Setup:
    return make_setup(engine_setup, shop)


def expected_items(setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
    """What the shop's records become, read straight from the shop: resource -> key -> item."""
    records = read_records(
        lambda: ShopifyConnector(setup.shop.root, setup.shop.token, bulk_threshold=0), stream)
    return mapped_items(mapping_for("shopify"), stream, records,
                        MappingContext(setup.shop.root, "en", "EUR", None))


ROUTES = {"customers": "/customers", "products": "/products", "categories": "/products-categories",
          "vouchers": "/vouchers", "statuses": "/orders-statuses",
          "manufacturers": "/products-manufacturers", "carts": "/carts"}


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_source(setup):
    setup.run()
    for stream, resource in (("customers", "customers"), ("products", "products"),
                             ("categories", "categories"), ("vouchers", "vouchers"),
                             ("statuses", "statuses"), ("manufacturers", "manufacturers"),
                             ("carts", "carts")):
        assert_stored_as_mapped(setup.stored(resource, ROUTES[resource]),
                                expected_items(setup, stream)[resource], resource)


def test_orders_arrive_through_a_bulk_operation_field_by_field(setup):
    reports = setup.run()
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    expected = expected_items(setup, "orders")["orders"]

    assert set(orders) == set(expected)
    for order_id, item in expected.items():
        for field in ("amount", "amount_without_tax", "currency", "status_id", "reference",
                      "shipping_costs", "shipping_costs_without_tax", "is_confirmed",
                      "created_at"):
            assert orders[order_id][field] == item[field], (order_id, field)
    assert setup.shop.fake().get("/stats").json()["bulk_operations"] == 1
    quarantined = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    reasons = {reason for entry in quarantined for reason in entry.errors}
    assert "customer.email: 'not-an-email' is not a well-formed email address" in reasons
    order_report = next(r for r in reports if r.stream == "orders")
    assert order_report.counts["orders"]["quarantined"] == len(quarantined)


class TestAsEveryPlatform(EveryPlatform):
    """A second run with no change sends nothing (tests/engine/support.py)."""


def test_the_next_run_sends_only_what_changed(setup):
    setup.run()
    fake = setup.shop.fake()
    order_ids = fake.get("/orders/ids").json()["ids"]
    fake.post(f"/orders/{order_ids[0]}/touch")  # a new change time alone: nothing to send
    fake.put(f"/orders/{order_ids[1]}", json={"displayFinancialStatus": "REFUNDED"})
    created = fake.post("/orders", json={}).json()
    customer_ids = fake.get("/customers/ids").json()["ids"]
    fake.put(f"/customers/{customer_ids[1]}", json={"firstName": "Renamed"})
    setup.clock.advance(SETTLE)  # a sync reads up to a settled second

    again = setup.run_by_stream()

    assert again["orders"].counts["orders"]["pushed"] == 2
    assert again["customers"].counts["customers"]["pushed"] == 1
    assert sum(r.total("pushed") for r in again.values()) == 3
    stored = {o["order_id"]: o for o in setup.listed("/orders")}
    assert stored[str(order_ids[1])]["status_id"] == "REFUNDED"
    assert created["legacyResourceId"] in stored


def test_a_missing_token_names_the_environment_variable(setup):
    setup.env.pop("T_SHOPIFY_TOKEN")
    with pytest.raises(ConfigError) as caught:
        setup.run()
    assert caught.value.problems == [
        ("sources.shop.connection.token_env: the environment variable T_SHOPIFY_TOKEN is not"
         " set — export it")]


def test_the_configuration_is_checked_for_shopify(engine_setup, shop):
    with pytest.raises(ConfigError) as caught:
        make_setup(engine_setup, shop,
                   connection={"url": "http://shop.example", "options": {"api_version": "2025-13",
                                                                         "colour": "blue"}})
    assert caught.value.problems == [
        ("sources[0].connection.token_env: name the environment variable holding the Admin API"
         " access token (shpat_…)"),
        "sources[0].connection.options.colour: not an option of the shopify platform; known: "
        + ", ".join(
            __import__("pipelines.engine.platforms.shopify", fromlist=["OPTIONS"]).OPTIONS),
    ]
    with pytest.raises(ConfigError) as caught:
        make_setup(engine_setup, shop,
                   connection={"url": "http://shop.example", "token_env": "T",
                               "options": {"api_version": "2025-13"}})
    assert [p.split(":")[0] for p in caught.value.problems] == [
        "sources[0].connection.url", "sources[0].connection.options.api_version"]
