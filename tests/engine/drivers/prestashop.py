"""The PrestaShop fake shop behind a configured source, for the engine's end-to-end suite
and ``test_sync_prestashop.py``. The shop runs in New York time, its zone learned from
PS_TIMEZONE."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.sources.prestashop import PrestaShopConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from sandbox.shops.prestashop.launch import RunningFakeShop, start_in_thread
from tests.engine.drivers.base import ORDER_FIELDS, ROUTES, Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records

ZONE = "America/New_York"
#: resource -> the stream producing it
PRODUCED_BY = {resource: stream for stream, resources in mapping_for("prestashop").produces.items()
               for resource in resources}


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShop


def source_for(url: str, **options: Any) -> dict[str, Any]:
    return {"name": PrestaShop.source, "platform": "prestashop", "lookback_seconds": 0,
            "connection": {"url": url, "key_env": "T_PS_KEY", "options": options},
            "data_source": {"label": "PrestaShop test"}}


def source_records(shop: RunningFakeShop, stream: str) -> list[dict[str, Any]]:
    return read_records(lambda: PrestaShopConnector(shop.root, shop.key), stream)


class PrestaShop(Driver):
    platform = "prestashop"
    source = "presta"
    compared = {resource: PRODUCED_BY[resource] for resource in ROUTES}
    order_fields = (*ORDER_FIELDS, "cart_id")
    #: nested in the stored order otherwise than in the item
    ignore = ("customer", "products")
    secret = ("key_env", "T_PS_KEY")

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        shop = start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                               "--seed", "5", "--timezone", ZONE)
        return make(Setup, {**source_for(shop.root, version="1.7"), **source},
                    env={"T_PS_KEY": shop.key}, shop=shop)

    def stop(self, setup: Setup) -> None:
        setup.shop.stop()

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        return mapped_items(mapping_for("prestashop"), stream, source_records(setup.shop, stream),
                            MappingContext(setup.shop.root, "en", "EUR", None))

    def change(self, setup: Setup) -> Changed:
        """The new order is placed from an abandoned cart."""
        fake = setup.shop.fake()
        fake.post("/orders/3/touch")  # a new date_upd alone: nothing new for the API
        fake.put("/orders/4", json={"current_state": 6})
        abandoned = fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
        created = fake.post("/orders", json={"id_cart": abandoned[0]}).json()["id"]
        fake.put("/customers/9", json={"firstname": "Renamed"})
        return Changed(pushed={"orders": 2, "customers": 1},
                       stored={"orders": {"4": {"status_id": "6"}, str(created): {}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        setup.shop.fake().delete("/orders/5")
        return [Deleted("orders", "5")]


DRIVER = PrestaShop()
