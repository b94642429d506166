"""WooCommerce (REST API v3): consumer key and secret by environment variable, connector
options (``query_string_auth``, ``customer_role``, ``requests_per_second``…) under
``connection.options``."""

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

#: ``connection.options`` a source may set (fields of WooCommerceConfig)
OPTIONS = ("query_string_auth", "page_size", "customer_role", "include_trash",
           "variation_concurrency", "requests_per_second", "timeout", "connect_timeout")


def _options(source: Source) -> dict[str, Any]:
    return {"page_size": source.tuning.page_size, **source.connection.options}


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from connectors.sources.woocommerce import WooCommerceConnector
    from pipelines.engine.secrets import secret_from

    where = f"sources.{source.name}.connection"
    return WooCommerceConnector(
        source.connection.url or "",
        secret_from(env, source.connection.key_env, f"{where}.key_env"),
        secret_from(env, source.connection.secret_env, f"{where}.secret_env"),
        pacer=pacer,
        **_options(source),
    )


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.woocommerce import WooCommerceMapping

    return WooCommerceMapping()


def check(source: Source) -> list[str]:
    from connectors.sources.woocommerce import WooCommerceConfig

    problems = []
    connection = source.connection
    if not connection.url or not connection.url.startswith(("http://", "https://")):
        problems.append("connection.url: the shop's http(s) address is required,"
                        " like https://shop.example.com")
    for name in ("key_env", "secret_env"):
        if not getattr(connection, name):
            problems.append(f"connection.{name}: name the environment variable holding the"
                            f" consumer {name.removesuffix('_env')}")
    problems += unknown_options(source, OPTIONS)
    if problems:
        return problems
    return config_problems(WooCommerceConfig, {"base_url": connection.url, "consumer_key": "k",
                                               "consumer_secret": "s", **_options(source)})


def unsupported() -> dict[str, str]:
    from connectors.sources.woocommerce.connector import UNSUPPORTED

    return dict(UNSUPPORTED)


register(Platform(
    name="woocommerce",
    open_connector=open_connector,
    mapping=mapping,
    unsupported=unsupported,
    check=check,
))
