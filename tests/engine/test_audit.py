"""Audits: the destination is the truth. Items the ledger holds as visible are read again
from the API; what is missing or different there is found, sent again from the source, and
the figures are kept for ``status``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from connectors.sources.woocommerce import WooCommerceConnector
from pipelines.engine.audit import audit, resync
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.state import ItemStatus
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.support import (
    EngineSetup,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "woo"


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "60", "--customers", "20", "--products", "8",
                              "--seed", "11")
    yield running
    running.stop()


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShop

    def expected(self, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        """What the shop's records of ``stream`` become: resource -> key -> item."""
        records = read_records(
            lambda: WooCommerceConnector(self.shop.root, self.shop.key, self.shop.secret), stream)
        return mapped_items(mapping_for("woocommerce"), stream, records,
                            MappingContext(self.shop.root, "en", "EUR", None))

    def visible(self) -> dict[str, int]:
        return {r: c.get(ItemStatus.VISIBLE.value, 0) for r, c in self.state.counts(SOURCE).items()}


@pytest.fixture
def setup(engine_setup: MakeSetup, shop: RunningFakeShop) -> Setup:
    return engine_setup(Setup, {
        "name": SOURCE, "platform": "woocommerce",
        "connection": {"url": shop.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET"},
    }, env={"T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret}, shop=shop)


def synced_and_confirmed(setup: Setup) -> dict[str, int]:
    """Sync everything and confirm it (the session sandbox shows writes at once)."""
    setup.run()
    asyncio.run(setup.runner().reconcile(deadline_seconds=0))
    return setup.visible()


def test_an_audit_finds_items_deleted_or_edited_at_the_destination_and_sends_them_again(setup):
    visible = synced_and_confirmed(setup)
    # someone deletes customers and orders at the destination, and edits a product there
    customers = sorted(setup.stored("customers", "/customers"))[:5]
    orders = sorted(setup.stored("orders", "/orders"))[:10]
    setup.api.post("/customers/bulk-delete", json={"customer_ids": customers})
    setup.api.post("/orders/bulk-delete", json={"order_ids": orders})
    (key, product), *_ = sorted(setup.expected("products")["products"].items())
    data_source = setup.listed("/products")[0]["data_source_id"]
    edited = {k: v for k, v in product.items() if v is not None} | {
        "name": "Edited by hand", "id_data_source": data_source}
    assert setup.api.post("/products", json=[edited]).status_code == 200

    found = asyncio.run(audit(setup.runner()))
    asyncio.run(setup.runner().reconcile(deadline_seconds=0))

    assert found.totals()["checked"] == sum(visible.values())
    assert (found.resources["customers"].missing, found.resources["orders"].missing) == (5, 10)
    assert found.resources["products"].different == 1
    assert found.totals()["missing"] + found.totals()["different"] == found.totals()["resent"]
    assert found.gaps() == [] and found.not_checked() == []
    assert setup.visible() == visible
    assert_stored_as_mapped(setup.stored("customers", "/customers"),
                            setup.expected("customers")["customers"], "customers")
    assert_stored_as_mapped(setup.stored("products", "/products"),
                            setup.expected("products")["products"], "products")
    assert set(setup.stored("orders", "/orders")) >= set(orders)
    kept = setup.state.latest_runs(SOURCE, "audit")
    assert kept["customers"].counts == {"checked": visible["customers"], "missing": 5,
                                        "different": 0, "resent": 5, "unchecked": 0, "sample": 0}
    again = asyncio.run(audit(setup.runner()))
    assert (again.totals()["missing"], again.totals()["different"]) == (0, 0)


def test_sampled_audits_check_the_items_checked_longest_ago_first_and_cover_all_in_turn(setup):
    visible = synced_and_confirmed(setup)
    statuses = visible["statuses"]
    assert statuses > 5
    ids = sorted({key.split("|")[0] for key in setup.stored("statuses", "/orders-statuses")})
    setup.api.post("/orders-statuses/bulk-delete", json={"status_ids": ids})  # all of them

    first = asyncio.run(audit(setup.runner(), sample=5, resources=["statuses"]))
    asyncio.run(setup.runner().reconcile(deadline_seconds=0))  # confirms the five re-sent
    second = asyncio.run(audit(setup.runner(), sample=5, resources=["statuses"]))

    assert (first.resources["statuses"].checked, first.resources["statuses"].missing) == (5, 5)
    # the five just confirmed are the last in line: the rest of the deleted ones come first
    assert second.resources["statuses"].missing == statuses - 5
    assert setup.state.latest_runs(SOURCE, "audit")["statuses"].counts["sample"] == 1


def test_a_resync_sends_everything_again_and_leaves_the_cursors_alone(setup):
    setup.run()
    cursors = setup.state.cursors(SOURCE)
    accepted = setup.accepted()

    reports = asyncio.run(resync(setup.runner(), ["orders", "vouchers"]))

    sent = {r: n for report in reports for r, c in report.counts.items()
            if (n := c["accepted"])}
    assert set(sent) == {"orders", "vouchers"}
    after = setup.accepted()
    assert {r: after[r] - accepted[r] for r in sent} == sent
    assert setup.state.cursors(SOURCE) == cursors
