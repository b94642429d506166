"""A generated drop folder (CSV, JSON Lines, Parquet) behind a configured source, for the
engine's end-to-end suite and ``test_sync_files.py``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from connectors.sources.files import FilesConfig, FilesConnector
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.columns import FilesMapping
from sandbox.shops.files.config import STREAMS, TIMEZONE, connection
from sandbox.shops.files.drop import Drop, order_export, touch_time, write_drop
from sandbox.shops.sql.data import Shop, generate
from tests.engine.drivers.base import Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records


@dataclass
class Setup(EngineSetup):
    root: Path
    shop: Shop
    drop: Drop


class Files(Driver):
    platform = "files"
    source = "drop"
    compared = {resource: resource for resource in
                ("statuses", "categories", "customers", "products", "vouchers")}
    order_fields = ("amount", "amount_without_tax", "status_id", "is_confirmed", "created_at")
    not_applicable = {
        "missing_secret": "a folder has no secret (the OS decides who reads it)",
        "deletions": "a drop folder delivers changes, not the shop's content: rows cannot say"
                     " a record is gone (connectors/sources/files/README.md)",
    }

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        root = tmp_path / "drop"
        shop = generate(6, orders=80, customers=25, products=12)
        drop = write_drop(root, shop)
        return make(Setup, {"name": self.source, "platform": "files",
                            "connection": connection(str(root)), **source},
                    root=root, shop=shop, drop=drop)

    def stop(self, setup: Setup) -> None:
        """Nothing runs: a folder goes with the test's temporary folder."""

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        """Read with a memory of its own, not the engine's."""
        records = read_records(
            lambda: FilesConnector(FilesConfig(path=setup.root, timezone=TIMEZONE,
                                               streams=STREAMS,
                                               state_path=setup.root.parent / "expected.json")),
            stream)
        return mapped_items(FilesMapping(), stream, records,
                            MappingContext("", "en", "EUR", None))

    def change(self, setup: Setup) -> Changed:
        """A new file holding an order unchanged and an order changed, and a file dated
        before those already read (a late export): it is read all the same."""
        export = order_export(setup.shop)
        changed = {**export[3], "total": Decimal("321.00")}
        setup.drop.jsonl("orders", "orders-update.jsonl", [export[2], changed],
                         mtime=touch_time())
        late = {**export[4], "state": "refunded", "paid": False}
        setup.drop.jsonl("orders", "orders-old-export.jsonl", [late],
                         mtime=datetime(2024, 2, 1, tzinfo=UTC))
        return Changed(pushed={"orders": 2}, orders_read=3, stored={"orders": {
            str(changed["id"]): {"amount": 321.0}, str(late["id"]): {"status_id": "refunded"}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        raise AssertionError(self.not_applicable["deletions"])


DRIVER = Files()
