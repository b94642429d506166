"""Magento 2 / Adobe Commerce (REST): a bearer token by environment variable.

``connection.url`` is the REST root ``https://host/rest/<store_code>`` (or the shop's
address, then ``options.store_code`` picks the store view, ``default`` unless given);
``connection.token_env`` names the variable holding an integration or admin token;
``connection.options`` takes ``store_code``, ``page_size`` (≤ 300; default the source's
``tuning.page_size``), ``active_carts_only``, ``variations``, ``variation_concurrency``,
``order_statuses`` ({code: label} for statuses made in the admin), ``timeout``,
``connect_timeout``.
"""

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

OPTIONS = ("store_code", "page_size", "active_carts_only", "variations", "variation_concurrency",
           "order_statuses", "requests_per_second", "timeout", "connect_timeout")


def _config_fields(source: Source) -> dict[str, Any]:
    connection = source.connection
    options = {"page_size": source.tuning.page_size, **connection.options}
    return {"base_url": connection.url, **options}


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from connectors.sources.magento import MagentoConnector
    from pipelines.engine.secrets import secret_from

    where = f"sources.{source.name}.connection"
    fields = _config_fields(source)
    token = secret_from(env, source.connection.token_env, f"{where}.token_env")
    return MagentoConnector(fields.pop("base_url"), token, pacer=pacer, **fields)


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.magento import MagentoMapping

    return MagentoMapping()


def check(source: Source) -> list[str]:
    from pydantic import SecretStr

    from connectors.sources.magento import MagentoConfig

    problems = []
    connection = source.connection
    if not connection.url or not connection.url.startswith(("http://", "https://")):
        problems.append("connection.url: the shop's REST root is required, like"
                        " https://shop.example.com/rest/default")
    if not connection.token_env:
        problems.append("connection.token_env: name the environment variable holding the"
                        " integration or admin token")
    problems += unknown_options(source, OPTIONS)
    if problems:
        return problems
    return config_problems(MagentoConfig,
                           {**_config_fields(source), "token": SecretStr("checked")})


def unsupported() -> dict[str, str]:
    from connectors.sources.magento.connector import UNSUPPORTED

    return dict(UNSUPPORTED)


register(Platform(
    name="magento",
    open_connector=open_connector,
    mapping=mapping,
    unsupported=unsupported,
    check=check,
))
