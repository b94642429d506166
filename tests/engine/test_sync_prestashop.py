"""The sync engine end to end: a fake PrestaShop shop → the sandbox, over real HTTP, with a
real SQLite state store. The shop runs in New York time, its zone learned from PS_TIMEZONE."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from connectors.sources.prestashop import PrestaShopConnector
from connectors.sources.prestashop.values import utc_text
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.sync import SETTLE
from sandbox.shops.prestashop.launch import RunningFakeShop, start_in_thread
from tests.engine.support import (
    EngineSetup,
    EveryPlatform,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "presta"
ZONE = "America/New_York"
#: resource -> the sandbox route listing it (nested resources are counted instead)
ROUTES = {"statuses": "/orders-statuses", "carriers": "/orders-carriers",
          "groups": "/customers-groups", "categories": "/products-categories",
          "manufacturers": "/products-manufacturers", "customers": "/customers",
          "products": "/products", "vouchers": "/vouchers", "orders": "/orders", "carts": "/carts"}


def start_shop() -> RunningFakeShop:
    return start_in_thread("--orders", "80", "--customers", "25", "--products", "12",
                           "--seed", "5", "--timezone", ZONE)


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    """Shared by the tests that do not change it."""
    running = start_shop()
    yield running
    running.stop()


@pytest.fixture
def own_shop() -> Iterator[RunningFakeShop]:
    running = start_shop()
    yield running
    running.stop()


@dataclass
class Setup(EngineSetup):
    shop: RunningFakeShop


def source_for(url: str, **options: Any) -> dict[str, Any]:
    return {"name": SOURCE, "platform": "prestashop", "lookback_seconds": 0,
            "connection": {"url": url, "key_env": "T_PS_KEY", "options": options},
            "data_source": {"label": "PrestaShop test"}}


def config_for(url: str, **options: Any) -> dict[str, Any]:
    """A configuration whose destination nothing answers: for checks that stop before it."""
    return {"destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_API_KEY"},
            "sources": [source_for(url, **options)]}


def make_setup(engine_setup: MakeSetup, shop: RunningFakeShop) -> Setup:
    return engine_setup(Setup, source_for(shop.root, version="1.7"), env={"T_PS_KEY": shop.key},
                        shop=shop)


@pytest.fixture
def setup(engine_setup: MakeSetup, shop: RunningFakeShop) -> Setup:
    return make_setup(engine_setup, shop)


@pytest.fixture
def changing(engine_setup: MakeSetup, own_shop: RunningFakeShop) -> Setup:
    """A setup on a shop of its own, which the test changes."""
    return make_setup(engine_setup, own_shop)


def source_records(shop: RunningFakeShop, stream: str) -> list[dict[str, Any]]:
    return read_records(lambda: PrestaShopConnector(shop.root, shop.key), stream)


def expected_items(shop: RunningFakeShop, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
    """What the shop's records become, read straight from the shop: resource -> key -> item."""
    return mapped_items(mapping_for("prestashop"), stream, source_records(shop, stream),
                        MappingContext(shop.root, "en", "EUR", None))


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_source(setup: Setup) -> None:
    reports = setup.run()
    assert [r.stream for r in reports] == list(mapping_for("prestashop").produces)
    expected: dict[str, dict[str, dict[str, Any]]] = {}
    for stream in mapping_for("prestashop").produces:
        expected.update(expected_items(setup.shop, stream))
    for resource, route in ROUTES.items():
        assert_stored_as_mapped(setup.stored(resource, route), expected[resource], resource,
                                ignore=("customer", "products"))
    counts = setup.stats()["stored"]
    for resource in ("addresses", "variations", "images"):
        assert counts[resource] == len(expected[resource]) > 0, resource
    assert {r["lang"] for r in setup.listed("/products")} == {"en", "fr"}


def test_orders_arrive_in_utc_field_by_field_and_invalid_ones_are_quarantined(setup: Setup) -> None:
    reports = setup.run(streams=["orders"])
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    expected = expected_items(setup.shop, "orders")["orders"]
    assert set(orders) == set(expected)
    raw = {str(r["id"]): r for r in source_records(setup.shop, "orders")}
    for order_id, item in expected.items():
        for field in ("amount", "amount_without_tax", "currency", "status_id", "reference",
                      "shipping_costs", "is_confirmed", "created_at", "cart_id"):
            assert orders[order_id][field] == item[field], (order_id, field)
        assert orders[order_id]["customer_email"] == item["customer"]["email"]
        assert item["created_at"] == utc_text(raw[order_id]["date_add"], ZONE)
    quarantined = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    reasons = {reason for entry in quarantined for reason in entry.errors}
    assert "customer.email: 'not-an-email' is not a well-formed email address" in reasons
    assert reports[0].counts["orders"]["quarantined"] == len(quarantined) > 0


class TestAsEveryPlatform(EveryPlatform):
    """A second run with no change sends nothing (tests/engine/support.py)."""


def test_the_next_run_sends_only_what_changed_and_reconciling_finds_deletions(
    changing: Setup
) -> None:
    setup = changing
    setup.run()
    fake = setup.shop.fake()
    fake.post("/orders/3/touch")  # a new date_upd alone: nothing new for the API
    fake.put("/orders/4", json={"current_state": 6})
    abandoned = fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
    created = fake.post("/orders", json={"id_cart": abandoned[0]}).json()["id"]
    fake.put("/customers/9", json={"firstname": "Renamed"})
    fake.delete("/orders/5")
    setup.clock.advance(SETTLE)  # a sync reads up to a settled second

    again = setup.run_by_stream()

    assert again["orders"].counts["orders"]["pushed"] == 2
    assert again["customers"].counts["customers"]["pushed"] == 1
    assert sum(r.total("pushed") for r in again.values()) == 3
    stored = {o["order_id"]: o for o in setup.listed("/orders")}
    assert stored["4"]["status_id"] == "6" and str(created) in stored

    report = asyncio.run(setup.runner().reconcile(deadline_seconds=600))
    assert report.resources["orders"].deleted == 1  # order 5, gone from the id set
    assert report.resources["carts"].deleted == 1  # the cart ordered since: not abandoned
    assert "5" not in {o["order_id"] for o in setup.listed("/orders")}
    assert str(abandoned[0]) not in {c["cart_id"] for c in setup.listed("/carts")}


def test_connection_problems_name_their_fields() -> None:
    local = "http://127.0.0.1:9"
    with pytest.raises(ConfigError) as caught:
        parse_config(config_for(local, timezone="Mars/Olympus", langs=["en"]))
    assert caught.value.problems == [
        ("sources[0].connection.options.langs: not an option of the prestashop platform;"
         " known: timezone,"
         " version, languages, id_shop, ws_key_in_query, page_size, lookup_size,"
         " requests_per_second, timeout, connect_timeout")]
    with pytest.raises(ConfigError) as caught:
        parse_config(config_for("http://shop.example", timezone="Mars/Olympus", version="7"))
    assert caught.value.problems == [
        ("sources[0].connection.url: base URL 'http://shop.example' must use https: the"
         " webservice key travels with every request (plain http is allowed on loopback only)"),
        ("sources[0].connection.options.timezone: unknown time zone 'Mars/Olympus': use the"
         " shop's PS_TIMEZONE, an IANA name like Europe/Paris"),
        "sources[0].connection.options.version: Input should be '1.7' or '8'"]
    config = parse_config(config_for(local))
    with pytest.raises(ConfigError, match="connection.key_env: the environment variable"
                                          " T_PS_KEY is not set"):
        asyncio.run(SourceRunner(config, config.sources[0],
                                 StateStore("sqlite://"), {"T_API_KEY": "x"}).run())
