"""The WooCommerce fake shop behind a configured source, for the engine's end-to-end
suite and ``test_sync_woocommerce.py``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.sources.woocommerce import WooCommerceConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.drivers.base import Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShop


def start_shop() -> RunningFakeShop:
    return start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                           "--seed", "5")


def make_setup(make: MakeSetup, shop: RunningFakeShop, **source: Any) -> Setup:
    return make(Setup, {
        "name": WooCommerce.source, "platform": "woocommerce",
        "connection": {"url": shop.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET"},
        **source,
    }, env={"T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret}, shop=shop)


def raw_records(setup: Setup, stream: str) -> list[dict[str, Any]]:
    return read_records(
        lambda: WooCommerceConnector(setup.shop.root, setup.shop.key, setup.shop.secret), stream)


class WooCommerce(Driver):
    platform = "woocommerce"
    source = "woo"
    compared = {"customers": "customers", "products": "products", "categories": "categories",
                "vouchers": "coupons", "statuses": "statuses"}
    secret = ("secret_env", "T_WC_SECRET")

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        return make_setup(make, start_shop(), **source)

    def stop(self, setup: Setup) -> None:
        setup.shop.stop()

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        return mapped_items(mapping_for("woocommerce"), stream, raw_records(setup, stream),
                            MappingContext(setup.shop.root, "en", "EUR", None))

    def change(self, setup: Setup) -> Changed:
        fake = setup.shop.fake()
        order_ids = fake.get("/orders/ids").json()["ids"]
        fake.post(f"/orders/{order_ids[0]}/touch")  # a new modification time alone
        fake.put(f"/orders/{order_ids[1]}", json={"status": "completed", "total": "123.45"})
        created = fake.post("/orders", json={}).json()
        customer_ids = fake.get("/customers/ids").json()["ids"]
        fake.put(f"/customers/{customer_ids[1]}", json={"first_name": "Renamed"})
        return Changed(pushed={"orders": 2, "customers": 1}, stored={"orders": {
            str(order_ids[1]): {"amount": 123.45}, str(created["id"]): {}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        """For good (``force=true``): WooCommerce keeps no log of it."""
        product = str(setup.listed("/products")[0]["product_id"])
        setup.shop.fake().delete(f"/products/{product}", params={"force": "true"})
        return [Deleted("products", product)]


DRIVER = WooCommerce()
