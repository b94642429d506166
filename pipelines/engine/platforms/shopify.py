"""Shopify (Admin GraphQL API): the shop's URL, an access token by environment variable, and
connector options (``api_version`` first of all) under ``connection.options``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipelines.engine.platforms import (
    Env,
    Platform,
    config_problems,
    register,
    unknown_options,
)

if TYPE_CHECKING:
    from connectors.http.pacing import Pacing
    from connectors.sources.base import SourceConnector
    from pipelines.engine.config import Source
    from pipelines.engine.mappings.base import PlatformMapping

#: ``connection.options`` a source may set (fields of ShopifyConfig)
OPTIONS = ("api_version", "page_size", "nested_page_size", "bulk_threshold",
           "bulk_window_records", "sort_window_records", "bulk_poll_interval",
           "bulk_poll_max_interval", "bulk_timeout", "max_throttle_wait", "timeout",
           "connect_timeout")


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from connectors.sources.shopify import ShopifyConnector
    from pipelines.engine.secrets import secret_from

    options: dict[str, Any] = {"page_size": source.tuning.page_size, **source.connection.options}
    return ShopifyConnector(
        source.connection.url or "",
        secret_from(env, source.connection.token_env,
                    f"sources.{source.name}.connection.token_env"),
        **options,
    )


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.shopify import ShopifyMapping

    return ShopifyMapping()


def check(source: Source) -> list[str]:
    from connectors.sources.shopify import ShopifyConfig

    problems = []
    connection = source.connection
    if not connection.url:
        problems.append("connection.url: the shop's address is required, like"
                        " https://my-shop.myshopify.com")
    if not connection.token_env:
        problems.append("connection.token_env: name the environment variable holding the Admin"
                        " API access token (shpat_…)")
    unknown = unknown_options(source, OPTIONS)
    problems += unknown
    if connection.url and not unknown:
        problems += config_problems(
            ShopifyConfig, {"shop_url": connection.url, "access_token": "x", **connection.options},
            url_field="shop_url")
    return problems


register(Platform(
    name="shopify",
    open_connector=open_connector,
    mapping=mapping,
    check=check,
))
