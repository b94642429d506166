"""WooCommerce (REST API v3): consumer key and secret by environment variable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.engine.platforms import DemoSpec, Env, Platform, register

if TYPE_CHECKING:
    from connectors.sources.base import SourceConnector
    from pipelines.engine.config import Source
    from pipelines.engine.mappings.base import PlatformMapping


def open_connector(source: Source, env: Env) -> SourceConnector:
    from connectors.sources.woocommerce import WooCommerceConnector
    from pipelines.engine.secrets import secret_from

    where = f"sources.{source.name}.connection"
    return WooCommerceConnector(
        source.connection.url or "",
        secret_from(env, source.connection.key_env, f"{where}.key_env"),
        secret_from(env, source.connection.secret_env, f"{where}.secret_env"),
        page_size=source.tuning.page_size,
    )


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.woocommerce import WooCommerceMapping

    return WooCommerceMapping()


def check(source: Source) -> list[str]:
    problems = []
    connection = source.connection
    if not connection.url or not connection.url.startswith(("http://", "https://")):
        problems.append("connection.url: the shop's http(s) address is required,"
                        " like https://shop.example.com")
    for name in ("key_env", "secret_env"):
        if not getattr(connection, name):
            problems.append(f"connection.{name}: name the environment variable holding the"
                            f" consumer {name.removesuffix('_env')}")
    return problems


def unsupported() -> dict[str, str]:
    from connectors.sources.woocommerce.connector import UNSUPPORTED

    return dict(UNSUPPORTED)


register(Platform(
    name="woocommerce",
    open_connector=open_connector,
    mapping=mapping,
    unsupported=unsupported,
    check=check,
    demo=DemoSpec(
        command=("fake-shop", "woocommerce"),
        banner=r"at (http://\S+?)/wp-json",
        connection=lambda url: {"url": url, "key_env": "SHOPSYNC_DEMO_WC_KEY",
                                "secret_env": "SHOPSYNC_DEMO_WC_SECRET"},
        env={"SHOPSYNC_DEMO_WC_KEY": "ck_shopsync_fake", "SHOPSYNC_DEMO_WC_SECRET": "cs_shopsync_fake"},
    ),
))
