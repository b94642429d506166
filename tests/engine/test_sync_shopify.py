"""The sync engine end to end on Shopify only (the cases every platform passes are
test_sync_every_platform.py): a fake Shopify shop → the sandbox, over real HTTP, with a
real SQLite state store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipelines.engine.config import ConfigError
from pipelines.engine.platforms.shopify import OPTIONS
from sandbox.shops.shopify.launch import RunningFakeShopify
from tests.engine.drivers.base import FirstSync
from tests.engine.drivers.shopify import DRIVER, Shopify, make_setup, start_shop
from tests.engine.drivers.shopify import OPTIONS as SOURCE_OPTIONS


@pytest.fixture
def driver() -> Shopify:
    return DRIVER


@pytest.fixture
def shop() -> Iterator[RunningFakeShopify]:
    running = start_shop()
    yield running
    running.stop()


def test_orders_arrive_through_one_bulk_operation(first_sync: FirstSync) -> None:
    """The window holds more orders than the source's ``bulk_threshold``."""
    setup = first_sync.setup
    assert first_sync.reports["orders"].records > SOURCE_OPTIONS["bulk_threshold"]
    assert setup.shop.fake().get("/stats").json()["bulk_operations"] == 1


def test_the_configuration_is_checked_for_shopify(engine_setup, shop):
    with pytest.raises(ConfigError) as caught:
        make_setup(engine_setup, shop,
                   connection={"url": "http://shop.example", "options": {"api_version": "2025-13",
                                                                         "colour": "blue"}})
    assert caught.value.problems == [
        ("sources[0].connection.token_env: name the environment variable holding the Admin API"
         " access token (shpat_…)"),
        "sources[0].connection.options.colour: not an option of the shopify platform; known: "
        + ", ".join(OPTIONS),
    ]
    with pytest.raises(ConfigError) as caught:
        make_setup(engine_setup, shop,
                   connection={"url": "http://shop.example", "token_env": "T",
                               "options": {"api_version": "2025-13"}})
    assert [p.split(":")[0] for p in caught.value.problems] == [
        "sources[0].connection.url", "sources[0].connection.options.api_version"]
