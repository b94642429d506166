"""The sync engine end to end: a fake drop folder (CSV, JSON Lines, Parquet) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.files import FilesConfig, FilesConnector
from pipelines.engine.config import Config, parse_config
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.columns import FilesMapping
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.files.config import STREAMS, TIMEZONE, connection
from sandbox.shops.files.drop import Drop, order_export, touch_time, write_drop
from sandbox.shops.sql.data import Shop, generate

SOURCE = "drop"
ROUTES = {"statuses": "/orders-statuses", "categories": "/products-categories",
          "customers": "/customers", "products": "/products", "vouchers": "/vouchers"}


@dataclass
class Setup:
    config: Config
    env: dict[str, str]
    state: StateStore
    api: httpx.Client
    stats_url: str
    root: Path
    shop: Shop
    drop: Drop

    def runner(self) -> SourceRunner:
        return SourceRunner(self.config, self.config.sources[0], self.state, self.env)

    def run(self, **kwargs: Any) -> dict[str, Any]:
        return {r.stream: r for r in asyncio.run(self.runner().run(**kwargs))}

    def stats(self) -> dict[str, Any]:
        return self.api.get(self.stats_url).json()["data"]

    def listed(self, route: str) -> list[dict[str, Any]]:
        return self.api.get(route, params={"limit": 1000}).json()["data"]


@pytest.fixture
def setup(sandbox, tmp_path, fresh_key):
    root = tmp_path / "drop"
    shop = generate(6, orders=80, customers=25, products=12)
    drop = write_drop(root, shop)
    key = fresh_key()
    config = parse_config({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_API_KEY"},
        "sources": [{"name": SOURCE, "platform": "files", "connection": connection(str(root)),
                     "data_source": {"label": "Files test"}, "lookback_seconds": 0}],
    })
    made = Setup(config, {"T_API_KEY": key}, StateStore(f"sqlite:///{tmp_path / 'state.db'}"),
                 sandbox.client(key), sandbox.root + "/_sandbox/stats", root, shop, drop)
    yield made
    made.state.close()


def expected_items(root: Path, stream: str) -> dict[str, dict[str, Any]]:
    """What the folder's rows become, read (with a memory of its own) and mapped outside the
    engine: key -> item."""
    connector = FilesConnector(FilesConfig(path=root, timezone=TIMEZONE, streams=STREAMS,
                                           state_path=root.parent / "expected.json"))

    async def read() -> list[dict[str, Any]]:
        return [r async for page in connector.read(stream) for r in page]

    spec = SYNC_RESOURCES[stream]
    out = {}
    for record in asyncio.run(read()):
        for _, item in FilesMapping().map(stream, record, MappingContext("", "en", "EUR", None)):
            if not validate_item(spec.model, item):
                out["|".join(str(item[f]) for f in spec.key_fields)] = item
    return out


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_files(setup):
    reports = setup.run()

    for resource, route in ROUTES.items():
        spec = SYNC_RESOURCES[resource]
        stored = {"|".join(str(row[f]) for f in spec.key_fields): row for row in setup.listed(route)}
        expected = expected_items(setup.root, resource)
        assert set(stored) == set(expected), resource
        for key, item in expected.items():
            sent = {k: v for k, v in item.items() if v is not None}
            assert {f: stored[key].get(f) for f in sent} == sent, (resource, key)
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
    accepted = {r: c.get("accepted", 0) for r, c in setup.stats()["writes"].items()}
    for path in setup.root.rglob("*.csv"):  # touched, not changed
        path.touch()

    again = setup.run()

    assert sum(r.records for r in again.values()) == 0
    assert sum(r.total("pushed") for r in again.values()) == 0
    assert {r: c.get("accepted", 0) for r, c in setup.stats()["writes"].items()} == accepted


def test_a_new_file_sends_only_what_changed_and_a_late_file_is_still_read(setup):
    setup.run()
    export = order_export(setup.shop)
    changed = {**export[3], "total": Decimal("321.00")}
    setup.drop.jsonl("orders", "orders-update.jsonl", [export[2], changed], mtime=touch_time())
    late = {**export[4], "state": "refunded", "paid": False}
    setup.drop.jsonl("orders", "orders-old-export.jsonl", [late],
                     mtime=datetime(2024, 2, 1, tzinfo=UTC))

    again = setup.run()

    assert again["orders"].records == 3
    assert again["orders"].counts["orders"]["pushed"] == 2
    assert sum(r.total("pushed") for r in again.values()) == 2
    stored = {o["order_id"]: o for o in setup.listed("/orders")}
    assert stored[str(changed["id"])]["amount"] == 321.0
    assert stored[str(late["id"])]["status_id"] == "refunded"
