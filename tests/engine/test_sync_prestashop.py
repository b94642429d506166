"""The sync engine end to end on PrestaShop only (the cases every platform passes are
test_sync_every_platform.py): a fake PrestaShop shop → the sandbox, over real HTTP, with a
real SQLite state store. The shop runs in New York time, its zone learned from PS_TIMEZONE."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from connectors.sources.prestashop.values import utc_text
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.mappings import mapping_for
from pipelines.engine.plan import SETTLE
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
from tests.engine.drivers.base import FirstSync
from tests.engine.drivers.prestashop import (
    DRIVER,
    ZONE,
    PrestaShop,
    Setup,
    source_for,
    source_records,
)


@pytest.fixture
def driver() -> PrestaShop:
    return DRIVER


def config_for(url: str, **options: Any) -> dict[str, Any]:
    """A configuration whose destination nothing answers: for checks that stop before it."""
    return {"destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_API_KEY"},
            "sources": [source_for(url, **options)]}


def test_a_first_sync_sends_every_stream_in_order_nested_resources_and_both_languages(
    first_sync: FirstSync
) -> None:
    setup = first_sync.setup
    assert list(first_sync.reports) == list(mapping_for("prestashop").produces)
    counts = setup.stats()["stored"]
    for resource, stream in (("addresses", "addresses"), ("variations", "products"),
                             ("images", "products")):
        assert counts[resource] == len(DRIVER.expected(setup, stream)[resource]) > 0, resource
    assert {r["lang"] for r in setup.listed("/products")} == {"en", "fr"}


def test_orders_arrive_in_utc(first_sync: FirstSync) -> None:
    setup = first_sync.setup
    expected = DRIVER.expected(setup, "orders")["orders"]
    raw = {str(r["id"]): r for r in source_records(setup.shop, "orders")}
    for order_id, item in expected.items():
        assert item["created_at"] == utc_text(raw[order_id]["date_add"], ZONE)


def test_a_cart_ordered_since_is_no_longer_abandoned_and_reconciling_deletes_it(
    setup: Setup
) -> None:
    setup.run()
    fake = setup.shop.fake()
    abandoned = fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
    fake.post("/orders", json={"id_cart": abandoned[0]})
    setup.clock.advance(SETTLE)
    setup.run()

    report = asyncio.run(setup.runner().reconcile(deadline_seconds=600))

    assert report.resources["carts"].deleted == 1
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
