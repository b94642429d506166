"""The sync engine end to end on Magento only (the cases every platform passes are
test_sync_every_platform.py): a fake Magento shop → the sandbox, over real HTTP, with a
real SQLite state store."""

from __future__ import annotations

import pytest

from pipelines.engine.plan import SETTLE
from tests.engine.drivers.base import FirstSync
from tests.engine.drivers.magento import DRIVER, Magento, raw


@pytest.fixture
def driver() -> Magento:
    return DRIVER


def test_a_first_sync_quarantines_nothing(first_sync: FirstSync) -> None:
    assert sum(r.total("quarantined") for r in first_sync.reports.values()) == 0


def test_orders_arrive_with_utc_times_configurable_lines_and_known_carriers(
    first_sync: FirstSync
) -> None:
    setup = first_sync.setup
    orders = {o["order_id"] for o in setup.listed("/orders")}
    records = {str(r["entity_id"]): r for r in raw(setup, "orders")}
    expected = DRIVER.expected(setup, "orders")["orders"]

    assert orders == set(expected) == set(records)
    for order_id, item in expected.items():
        # Magento's times are UTC without an offset, whatever the store's timezone
        assert item["created_at"] == records[order_id]["created_at"].replace(" ", "T") + "Z"
    configurable = [item for item in expected.values()
                    if any(line["product_variation_id"] for line in item["products"])]
    assert configurable, "the fake sells configurable products"
    assert {c["carrier_id"] for c in setup.listed("/orders-carriers")} <= {
        "flatrate", "tablerate", "dhl"}


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
