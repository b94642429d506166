"""The Magento platform's registration: its connection checks name the field to fix, the
connector is opened from the source's configuration, and what Magento cannot feed says why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.platforms import platform
from pipelines.engine.runner import selected_resources


def config(connection: dict[str, Any], **source: Any):  # type: ignore[no-untyped-def]
    return parse_config({"sources": [{"name": "mg", "platform": "magento",
                                      "connection": connection, **source}]})


def problems(connection: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        config(connection)
    return caught.value.problems


def test_connection_problems_name_the_field_and_the_fix() -> None:
    assert problems({"url": "https://shop.example/rest/default"}) == [
        ("sources[0].connection.token_env: name the environment variable holding the"
        " integration or admin token")]
    assert problems({"url": "https://shop.example", "token_env": "T",
                     "options": {"pagesize": 5}})[0].startswith(
        "sources[0].connection.options.pagesize: not an option of the magento platform;"
         " known: store_code,")
    assert problems({"url": "http://shop.example", "token_env": "T"})[0].startswith(
        "sources[0].connection.url: base URL 'http://shop.example' must use https")
    assert problems({"url": "https://shop.example", "token_env": "T",
                     "options": {"page_size": 500}}) == [
        "sources[0].connection.options.page_size: Input should be less than or equal to 300"]
    assert problems({"token_env": "T"})[0].startswith("sources[0].connection.url: the shop's REST")


def test_the_connector_is_opened_with_the_token_and_options_of_the_source() -> None:
    source = config({"url": "https://shop.example", "token_env": "MG_TOKEN",
                     "options": {"store_code": "de", "active_carts_only": True}},
                    tuning={"page_size": 50}).sources[0]
    connector = platform("magento").open_connector(source, {"MG_TOKEN": "tok"})
    try:
        assert connector.config.base_url == "https://shop.example/rest/de"
        assert connector.config.page_size == 50 and connector.config.active_carts_only
        assert connector.config.token.get_secret_value() == "tok"
    finally:
        asyncio.run(connector.aclose())
    with pytest.raises(ConfigError, match="MG_TOKEN is not set"):
        platform("magento").open_connector(source, {})


def test_resources_magento_cannot_feed_say_why() -> None:
    source = config({"url": "https://shop.example", "token_env": "T"},
                    resources=["orders", "vouchers"]).sources[0]
    with pytest.raises(ConfigError) as caught:
        selected_resources(source)
    assert caught.value.problems[0].startswith(
        "sources.mg.resources: vouchers cannot be synced from magento: not read from Magento"
        " yet: cart price rules")
