"""The sync engine end to end: a fake PrestaShop shop → the sandbox, over real HTTP, with a
real SQLite state store. The shop runs in New York time, its zone learned from PS_TIMEZONE."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.prestashop import PrestaShopConnector
from connectors.sources.prestashop.values import utc_text
from pipelines.engine.config import Config, ConfigError, parse_config
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.sync import SETTLE
from sandbox.shops.prestashop.launch import RunningFakeShop, attach, launch

SOURCE = "presta"
ZONE = "America/New_York"
#: resource -> the sandbox route listing it (nested resources are counted instead)
ROUTES = {"statuses": "/orders-statuses", "carriers": "/orders-carriers",
          "groups": "/customers-groups", "categories": "/products-categories",
          "manufacturers": "/products-manufacturers", "customers": "/customers",
          "products": "/products", "vouchers": "/vouchers", "orders": "/orders", "carts": "/carts"}


def start_shop() -> RunningFakeShop:
    return attach(launch("--orders", "80", "--customers", "25", "--products", "12",
                         "--seed", "5", "--timezone", ZONE))


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
class Setup:
    config: Config
    env: dict[str, str]
    state: StateStore
    api: httpx.Client
    stats_url: str
    shop: RunningFakeShop

    def runner(self) -> SourceRunner:
        return SourceRunner(self.config, self.config.sources[0], self.state, self.env)

    def run(self, **kwargs: Any) -> list[Any]:
        return asyncio.run(self.runner().run(**kwargs))

    def stats(self) -> dict[str, Any]:
        return self.api.get(self.stats_url).json()["data"]

    def listed(self, route: str, **params: Any) -> list[dict[str, Any]]:
        return self.api.get(route, params={"limit": 1000, **params}).json()["data"]


def config_for(url: str, **options: Any) -> dict[str, Any]:
    return {
        "destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_API_KEY"},
        "sources": [{"name": SOURCE, "platform": "prestashop", "lookback_seconds": 0,
                     "connection": {"url": url, "key_env": "T_PS_KEY", "options": options},
                     "data_source": {"label": "PrestaShop test"}}],
    }


def make_setup(sandbox, shop, tmp_path, fresh_key) -> Setup:
    key = fresh_key()
    raw = config_for(shop.root, version="1.7")
    raw["destination"]["base_url"] = sandbox.base_url
    env = {"T_API_KEY": key, "T_PS_KEY": shop.key}
    return Setup(parse_config(raw), env, StateStore(f"sqlite:///{tmp_path / 'state.db'}"),
                 sandbox.client(key), sandbox.root + "/_sandbox/stats", shop)


@pytest.fixture
def setup(sandbox, shop, tmp_path, fresh_key) -> Iterator[Setup]:
    made = make_setup(sandbox, shop, tmp_path, fresh_key)
    yield made
    made.state.close()


@pytest.fixture
def changing(sandbox, own_shop, tmp_path, fresh_key) -> Iterator[Setup]:
    """A setup on a shop of its own, which the test changes."""
    made = make_setup(sandbox, own_shop, tmp_path, fresh_key)
    yield made
    made.state.close()


def source_records(shop: RunningFakeShop, stream: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with PrestaShopConnector(shop.root, shop.key) as connector:
            return [r async for page in connector.read(stream) for r in page]

    return asyncio.run(read())


def expected_items(shop: RunningFakeShop, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
    """What the shop's records become, read straight from the shop: resource -> key -> item."""
    mapping = mapping_for("prestashop")
    context = MappingContext(shop.root, "en", "EUR", None)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for record in source_records(shop, stream):
        for resource, item in mapping.map(stream, record, context):
            if not validate_item(SYNC_RESOURCES[resource].model, item):
                key = "|".join(str(item[f]) for f in SYNC_RESOURCES[resource].key_fields)
                out.setdefault(resource, {})[key] = item
    return out


def without_nulls(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if v is not None}


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_source(setup: Setup) -> None:
    reports = setup.run()
    assert [r.stream for r in reports] == list(mapping_for("prestashop").produces)
    expected: dict[str, dict[str, dict[str, Any]]] = {}
    for stream in mapping_for("prestashop").produces:
        expected.update(expected_items(setup.shop, stream))
    for resource, route in ROUTES.items():
        stored = {"|".join(str(row[f]) for f in SYNC_RESOURCES[resource].key_fields): row
                  for row in setup.listed(route)}
        assert set(stored) == set(expected[resource]), resource
        for key, item in expected[resource].items():
            row = stored[key]
            fields = {f: v for f, v in without_nulls(item).items()
                      if f not in ("customer", "products")}
            assert {f: row.get(f) for f in fields} == fields, (resource, key)
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


def test_a_second_run_with_no_change_sends_nothing(setup: Setup) -> None:
    setup.run()
    accepted_before = {r: c.get("accepted", 0) for r, c in setup.stats()["writes"].items()}
    again = setup.run()
    assert sum(r.total("pushed") for r in again) == 0
    assert {r: c.get("accepted", 0) for r, c in setup.stats()["writes"].items()} == accepted_before


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
    time.sleep(SETTLE.total_seconds() + 0.2)  # a sync reads up to a settled second

    again = {r.stream: r for r in setup.run()}

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
        ("sources[0].connection.options.langs: not a PrestaShop option; known: timezone,"
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
