"""How the demo serves a fake of each platform and points a source at it: the fake's
command, the line it announces its address on, and the credentials it accepts.

This is the demo's knowledge, not the engine's: ``pipelines/engine/platforms`` say how to
read a real shop and know nothing of the fakes in ``sandbox/shops``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DemoSpec:
    """How ``shopsync demo --platform P`` serves a fake of the platform and points at it."""

    #: arguments of ``shopsync`` that start the fake (``--port 0`` and sizes are added)
    command: tuple[str, ...]
    #: regex whose first group is the address the source's connection uses, on its first line
    banner: str
    #: the source's ``connection`` for a fake at that address
    connection: Callable[[str], dict[str, Any]]
    #: environment the connection's ``*_env`` names refer to
    env: Mapping[str, str]
    #: how the size options are spelled for this fake
    sizes: Callable[[int, int, int], list[str]] = lambda orders, customers, products: [
        "--orders", str(orders), "--customers", str(customers), "--products", str(products)]


def _sql_connection(url: str) -> dict[str, Any]:
    from sandbox.shops.sql.config import connection

    return connection(url)


def _files_connection(path: str) -> dict[str, Any]:
    from sandbox.shops.files.config import connection

    return connection(path)


#: platform -> its demo; a platform without one has no ``shopsync demo --platform``
DEMOS: dict[str, DemoSpec] = {
    "files": DemoSpec(
        command=("fake-shop", "files"),
        banner=r"files at (/\S+)",
        connection=_files_connection,
        env={},
    ),
    "magento": DemoSpec(
        command=("fake-shop", "magento"),
        banner=r"at (http://\S+/rest/\S+)",
        connection=lambda url: {"url": url, "token_env": "SHOPSYNC_DEMO_MAGENTO_TOKEN",
                                "options": {"order_statuses": {"ready_for_pickup": "Ready for Pickup"}}},
        env={"SHOPSYNC_DEMO_MAGENTO_TOKEN": "shopsync-fake-magento-token"},
    ),
    "prestashop": DemoSpec(
        command=("fake-shop", "prestashop"),
        banner=r"at (http://\S+?)/api",
        connection=lambda url: {"url": url, "key_env": "SHOPSYNC_DEMO_PS_KEY",
                                "options": {"timezone": "Europe/Paris", "version": "1.7"}},
        env={"SHOPSYNC_DEMO_PS_KEY": "SHOPSYNCFAKEPRESTASHOPWEBSERVICE"},
    ),
    "shopify": DemoSpec(
        command=("fake-shop", "shopify"),
        banner=r"shopify at (http://\S+?)/admin/api",
        connection=lambda url: {"url": url, "token_env": "SHOPSYNC_DEMO_SHOPIFY_TOKEN",
                                # bulk operations from 100 records: the demo shows them at work
                                "options": {"bulk_poll_interval": 0.2, "bulk_threshold": 100}},
        env={"SHOPSYNC_DEMO_SHOPIFY_TOKEN": "shpat_shopsync_fake"},
    ),
    "sql": DemoSpec(
        command=("fake-shop", "sql"),
        banner=r"at (sqlite:///\S+)",
        connection=_sql_connection,
        env={},
    ),
    "woocommerce": DemoSpec(
        command=("fake-shop", "woocommerce"),
        banner=r"at (http://\S+?)/wp-json",
        connection=lambda url: {"url": url, "key_env": "SHOPSYNC_DEMO_WC_KEY",
                                "secret_env": "SHOPSYNC_DEMO_WC_SECRET"},
        env={"SHOPSYNC_DEMO_WC_KEY": "ck_shopsync_fake", "SHOPSYNC_DEMO_WC_SECRET": "cs_shopsync_fake"},
    ),
}


def demo_platforms() -> list[str]:
    """The platforms ``shopsync demo`` and ``shopsync dev`` can serve a fake of."""
    return sorted(DEMOS)


def demo_spec(platform_name: str) -> DemoSpec:
    """The demo of ``platform_name``.

    Raises:
        ValueError: the platform has no demo.
    """
    try:
        return DEMOS[platform_name]
    except KeyError:
        raise ValueError(f"the {platform_name} platform has no demo") from None
