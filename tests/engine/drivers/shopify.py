"""The Shopify fake shop behind a configured source, for the engine's end-to-end suite and
``test_sync_shopify.py``. Orders come through a bulk operation (the window holds more than
the source's ``bulk_threshold``), the other streams through paged queries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.sources.shopify import ShopifyConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from sandbox.shops.shopify.launch import RunningFakeShopify, start_in_thread
from tests.engine.drivers.base import ORDER_FIELDS, Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records

OPTIONS = {"bulk_threshold": 40, "bulk_poll_interval": 0.05}


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShopify


def start_shop() -> RunningFakeShopify:
    return start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                           "--seed", "5", "--bucket-size", "50000", "--restore-rate", "50000",
                           "--bulk-latency", "0.05")


def make_setup(make: MakeSetup, shop: RunningFakeShopify, **source: Any) -> Setup:
    return make(Setup, {
        "name": Shopify.source, "platform": "shopify",
        "connection": {"url": shop.root, "token_env": "T_SHOPIFY_TOKEN", "options": OPTIONS},
        **source,
    }, env={"T_SHOPIFY_TOKEN": shop.token}, shop=shop)


class Shopify(Driver):
    platform = "shopify"
    source = "shop"
    compared = {"customers": "customers", "products": "products", "categories": "categories",
                "vouchers": "vouchers", "statuses": "statuses",
                "manufacturers": "manufacturers", "carts": "carts"}
    order_fields = (*ORDER_FIELDS, "shipping_costs_without_tax")
    secret = ("token_env", "T_SHOPIFY_TOKEN")

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        return make_setup(make, start_shop(), **source)

    def stop(self, setup: Setup) -> None:
        setup.shop.stop()

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        records = read_records(
            lambda: ShopifyConnector(setup.shop.root, setup.shop.token, bulk_threshold=0),
            stream)
        return mapped_items(mapping_for("shopify"), stream, records,
                            MappingContext(setup.shop.root, "en", "EUR", None))

    def change(self, setup: Setup) -> Changed:
        fake = setup.shop.fake()
        order_ids = fake.get("/orders/ids").json()["ids"]
        fake.post(f"/orders/{order_ids[0]}/touch")  # a new change time alone: nothing to send
        fake.put(f"/orders/{order_ids[1]}", json={"displayFinancialStatus": "REFUNDED"})
        created = fake.post("/orders", json={}).json()
        customer_ids = fake.get("/customers/ids").json()["ids"]
        fake.put(f"/customers/{customer_ids[1]}", json={"firstName": "Renamed"})
        return Changed(pushed={"orders": 2, "customers": 1}, stored={"orders": {
            str(order_ids[1]): {"status_id": "REFUNDED"}, created["legacyResourceId"]: {}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        order = str(setup.listed("/orders")[0]["order_id"])
        setup.shop.fake().delete(f"/orders/{order}").raise_for_status()
        return [Deleted("orders", order)]


DRIVER = Shopify()
