"""The Magento fake shop (in New York time) behind a configured source, for the engine's
end-to-end suite and ``test_sync_magento.py``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.sources.magento import MagentoConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from sandbox.shops.magento.launch import RunningFakeMagento, start_in_thread
from tests.engine.drivers.base import ORDER_FIELDS, Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records

OPTIONS = {"order_statuses": {"ready_for_pickup": "Ready for Pickup"}}


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeMagento


def raw(setup: Setup, stream: str) -> list[dict[str, Any]]:
    return read_records(
        lambda: MagentoConnector(setup.shop.api_url, setup.shop.token, **OPTIONS), stream)


class Magento(Driver):
    platform = "magento"
    source = "mage"
    compared = {"customers": "customers", "products": "products", "categories": "categories",
                "statuses": "statuses", "carts": "carts"}
    order_fields = (*ORDER_FIELDS, "cart_id")
    secret = ("token_env", "T_MG_TOKEN")
    not_applicable = {
        "invalid_orders": "the fake Magento's orders are all valid: nothing is quarantined"
                          " (test_sync_magento.py checks that)",
    }

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        shop = start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                               "--carts", "15", "--seed", "5", "--timezone", "America/New_York")
        return make(Setup, {
            "name": self.source, "platform": "magento",
            "connection": {"url": shop.api_url, "token_env": "T_MG_TOKEN", "options": OPTIONS},
            **source,
        }, env={"T_MG_TOKEN": shop.token}, shop=shop)

    def stop(self, setup: Setup) -> None:
        setup.shop.stop()

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        return mapped_items(mapping_for("magento"), stream, raw(setup, stream),
                            MappingContext(setup.shop.api_url, "en", "EUR", None))

    def change(self, setup: Setup) -> Changed:
        """The order placed from a quote converts that cart: the cart is sent again too."""
        fake = setup.shop.fake()
        fake.post("/orders/3/touch")  # a new updated_at alone: nothing new for the API
        fake.put("/orders/7", json={"status": "closed", "state": "closed", "grand_total": 123.45})
        created = fake.post("/orders", json={}).json()
        fake.put("/customers/4", json={"firstname": "Renamed"})
        return Changed(
            pushed={"orders": 2, "customers": 1, "carts": 1},
            stored={"orders": {"7": {"amount": 123.45, "status_id": "closed"},
                               str(created["entity_id"]): {}},
                    "carts": {str(created["quote_id"]): {"is_converted": True}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        """Magento keeps no log of deletions: reconciling compares id sets."""
        fake = setup.shop.fake()
        fake.delete("/orders/11")
        fake.delete("/customers/6")
        return [Deleted("orders", "11"), Deleted("customers", "6")]


DRIVER = Magento()
