"""The sync engine end to end: a fake Magento shop → the sandbox, over real HTTP, with a real
SQLite state store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from connectors.sources.magento import MagentoConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.sync import SETTLE
from sandbox.shops.magento.launch import RunningFakeMagento, start_in_thread
from tests.engine.support import (
    EngineSetup,
    EveryPlatform,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "mage"
OPTIONS = {"order_statuses": {"ready_for_pickup": "Ready for Pickup"}}


@pytest.fixture
def shop() -> Iterator[RunningFakeMagento]:
    running = start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                              "--carts", "15", "--seed", "5", "--timezone", "America/New_York")
    yield running
    running.stop()


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeMagento


@pytest.fixture
def setup(engine_setup: MakeSetup, shop: RunningFakeMagento) -> Setup:
    return engine_setup(Setup, {
        "name": SOURCE, "platform": "magento",
        "connection": {"url": shop.api_url, "token_env": "T_MG_TOKEN", "options": OPTIONS},
    }, env={"T_MG_TOKEN": shop.token}, shop=shop)


def raw(setup: Setup, stream: str) -> list[dict[str, Any]]:
    return read_records(
        lambda: MagentoConnector(setup.shop.api_url, setup.shop.token, **OPTIONS), stream)


def expected_items(setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
    """What the shop's records become, read straight from the shop: resource -> key -> item."""
    return mapped_items(mapping_for("magento"), stream, raw(setup, stream),
                        MappingContext(setup.shop.api_url, "en", "EUR", None))


@pytest.mark.parametrize(
    ("stream", "resource", "route"),
    [("customers", "customers", "/customers"), ("products", "products", "/products"),
     ("categories", "categories", "/products-categories"),
     ("statuses", "statuses", "/orders-statuses"), ("carts", "carts", "/carts")],
)
def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_source(
    setup, stream, resource, route
):
    reports = setup.run()
    assert sum(r.total("quarantined") for r in reports) == 0

    assert_stored_as_mapped(setup.stored(resource, route), expected_items(setup, stream)[resource],
                            resource)


def test_orders_arrive_field_by_field_with_utc_times_lines_and_carts(setup):
    setup.run()
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    records = {str(r["entity_id"]): r for r in raw(setup, "orders")}
    expected = expected_items(setup, "orders")["orders"]

    assert set(orders) == set(expected) == set(records)
    for order_id, item in expected.items():
        for field in ("amount", "amount_without_tax", "currency", "status_id", "reference",
                      "shipping_costs", "is_confirmed", "created_at", "cart_id"):
            assert orders[order_id][field] == item[field], (order_id, field)
        # Magento's times are UTC without an offset, whatever the store's timezone
        assert item["created_at"] == records[order_id]["created_at"].replace(" ", "T") + "Z"
    configurable = [item for item in expected.values()
                    if any(line["product_variation_id"] for line in item["products"])]
    assert configurable, "the fake sells configurable products"
    assert {c["carrier_id"] for c in setup.listed("/orders-carriers")} <= {
        "flatrate", "tablerate", "dhl"}


class TestAsEveryPlatform(EveryPlatform):
    """A second run with no change sends nothing (tests/engine/support.py)."""


def test_the_next_run_sends_only_what_changed(setup):
    setup.run()
    fake = setup.shop.fake()
    fake.post("/orders/3/touch")  # a new updated_at alone: nothing new for the API
    fake.put("/orders/7", json={"status": "closed", "state": "closed", "grand_total": 123.45})
    created = fake.post("/orders", json={}).json()  # placed from a quote: a cart changes too
    fake.put("/customers/4", json={"firstname": "Renamed"})
    setup.clock.advance(SETTLE)  # a sync reads up to a settled second

    again = setup.run_by_stream()

    assert again["orders"].counts["orders"]["pushed"] == 2
    assert again["customers"].counts["customers"]["pushed"] == 1
    assert again["carts"].counts["carts"]["pushed"] == 1
    assert sum(r.total("pushed") for r in again.values()) == 4
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    assert orders["7"]["amount"] == 123.45 and orders["7"]["status_id"] == "closed"
    assert str(created["entity_id"]) in orders
    carts = {c["cart_id"]: c for c in setup.listed("/carts")}
    assert carts[str(created["quote_id"])]["is_converted"] is True


def test_deleted_records_are_found_by_comparing_id_sets_and_deleted_at_the_destination(setup):
    setup.run()
    fake = setup.shop.fake()
    fake.delete("/orders/11")
    fake.delete("/customers/6")

    report = asyncio.run(setup.runner().reconcile(deadline_seconds=0))

    assert report.resources["orders"].deleted == 1
    assert report.resources["customers"].deleted == 1
    assert "11" not in {o["order_id"] for o in setup.listed("/orders")}
    assert "6" not in {c["customer_id"] for c in setup.listed("/customers")}


def test_a_child_product_changed_alone_updates_its_variation_and_nothing_else(setup):
    setup.run()
    parent = next(p for p in raw(setup, "products") if len(p.get("_children") or []) > 1)
    # the dearest child: dearer still, the parent's price (its cheapest child's) stays
    child = max(parent["_children"], key=lambda c: c["price"])
    setup.shop.fake().put(f"/products/{child['id']}", json={"price": child["price"] + 10})
    setup.clock.advance(SETTLE)

    again = setup.run_by_stream()

    products = again["products"].counts
    assert products["variations"]["pushed"] == 1  # the parent re-read brought it
    assert products["products"]["pushed"] == 1  # the child's own product item
    assert "pushed" not in products.get("images", {})
    assert sum(r.total("pushed") for r in again.values()) == 2
    variations = {v["variation_id"]: v
                  for v in setup.listed(f"/products/{parent['id']}/variations")}
    assert variations[child["id"]]["price"] == child["price"] + 10
    assert setup.run_by_stream()["products"].total("pushed") == 0
