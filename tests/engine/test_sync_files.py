"""The sync engine end to end: a fake drop folder (CSV, JSON Lines, Parquet) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from connectors.sources.files import FilesConfig, FilesConnector
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.columns import FilesMapping
from pipelines.engine.state import ItemStatus
from sandbox.shops.files.config import STREAMS, TIMEZONE, connection
from sandbox.shops.files.drop import Drop, order_export, touch_time, write_drop
from sandbox.shops.sql.data import Shop, generate
from tests.engine.support import (
    EngineSetup,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "drop"
ROUTES = {"statuses": "/orders-statuses", "categories": "/products-categories",
          "customers": "/customers", "products": "/products", "vouchers": "/vouchers"}


@dataclass
class Setup(EngineSetup):
    root: Path
    shop: Shop
    drop: Drop


@pytest.fixture
def setup(engine_setup: MakeSetup, tmp_path: Path) -> Setup:
    root = tmp_path / "drop"
    shop = generate(6, orders=80, customers=25, products=12)
    drop = write_drop(root, shop)
    return engine_setup(Setup, {"name": SOURCE, "platform": "files",
                                "connection": connection(str(root))},
                        root=root, shop=shop, drop=drop)


def expected_items(root: Path, stream: str) -> dict[str, dict[str, Any]]:
    """What the folder's rows become, read (with a memory of its own) and mapped outside the
    engine: key -> item."""
    records = read_records(
        lambda: FilesConnector(FilesConfig(path=root, timezone=TIMEZONE, streams=STREAMS,
                                           state_path=root.parent / "expected.json")),
        stream)
    return mapped_items(FilesMapping(), stream, records,
                        MappingContext("", "en", "EUR", None)).get(stream, {})


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_files(setup):
    reports = setup.run_by_stream()

    for resource, route in ROUTES.items():
        assert_stored_as_mapped(setup.stored(resource, route),
                                expected_items(setup.root, resource), resource)
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    expected = expected_items(setup.root, "orders")
    assert set(orders) == set(expected)
    for order_id, item in expected.items():
        for field in ("amount", "amount_without_tax", "status_id", "is_confirmed", "created_at"):
            assert orders[order_id][field] == item[field], (order_id, field)
    assert reports["orders"].records == len(setup.drop.ids["orders"])


def test_rows_that_cannot_be_read_are_quarantined_under_their_file_and_line(setup):
    setup.run()
    held = {e.source_record_id: e for e in
            setup.state.entries(SOURCE, "customers", {ItemStatus.QUARANTINED})}
    broken = [i for i in setup.drop.ids["customers"] if ":" in i]

    assert set(broken) <= set(held)
    assert held[broken[0]].payload["customer_id"]["errors"] == [
        f"{broken[0]}: no key (column 'id' is empty or missing)"]
    orders = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    assert any(e.source_record_id.startswith("orders/orders-") for e in orders)


def test_files_already_read_are_not_read_again(setup):
    setup.run()
    accepted = setup.accepted()
    for path in setup.root.rglob("*.csv"):  # touched, not changed
        path.touch()

    again = setup.run()

    assert sum(r.records for r in again) == 0
    assert sum(r.total("pushed") for r in again) == 0
    assert setup.accepted() == accepted


def test_a_new_file_sends_only_what_changed_and_a_late_file_is_still_read(setup):
    setup.run()
    export = order_export(setup.shop)
    changed = {**export[3], "total": Decimal("321.00")}
    setup.drop.jsonl("orders", "orders-update.jsonl", [export[2], changed], mtime=touch_time())
    late = {**export[4], "state": "refunded", "paid": False}
    setup.drop.jsonl("orders", "orders-old-export.jsonl", [late],
                     mtime=datetime(2024, 2, 1, tzinfo=UTC))

    again = setup.run_by_stream()

    assert again["orders"].records == 3
    assert again["orders"].counts["orders"]["pushed"] == 2
    assert sum(r.total("pushed") for r in again.values()) == 2
    stored = {o["order_id"]: o for o in setup.listed("/orders")}
    assert stored[str(changed["id"])]["amount"] == 321.0
    assert stored[str(late["id"])]["status_id"] == "refunded"
