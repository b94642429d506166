"""PrestaShop (webservice, 1.7 and 8.x): the key by environment variable, the shop's time
zone, version and languages in ``connection.options``."""

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

#: connection.options the connector takes (see connectors/sources/prestashop/config.py)
OPTIONS = ("timezone", "version", "languages", "id_shop", "ws_key_in_query", "page_size",
           "lookup_size", "requests_per_second", "timeout", "connect_timeout")


def _options(source: Source) -> dict[str, Any]:
    options = dict(source.connection.options)
    options.setdefault("page_size", source.tuning.page_size)
    if isinstance(options.get("version"), int | float):
        options["version"] = "8" if options["version"] >= 8 else f"{options['version']:.1f}"
    return options


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from connectors.sources.prestashop import PrestaShopConnector
    from pipelines.engine.secrets import secret_from

    where = f"sources.{source.name}.connection"
    return PrestaShopConnector(source.connection.url or "",
                               secret_from(env, source.connection.key_env, f"{where}.key_env"),
                               pacer=pacer, **_options(source))


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.prestashop import PrestaShopMapping

    return PrestaShopMapping()


def check(source: Source) -> list[str]:
    """One line per problem with the connection, naming the field to fix."""
    from connectors.sources.prestashop.config import PrestaShopConfig

    problems = []
    connection = source.connection
    if not connection.url or not connection.url.startswith(("http://", "https://")):
        problems.append("connection.url: the shop's http(s) address is required, like"
                        " https://shop.example.com (or its webservice root …/api)")
    if not connection.key_env:
        problems.append("connection.key_env: name the environment variable holding the"
                        " webservice key (32 characters)")
    problems += unknown_options(source, OPTIONS)
    if problems:
        return problems
    # the options as the connector will read them (with a well-formed stand-in key)
    return config_problems(PrestaShopConfig,
                           {"base_url": connection.url, "key": "K" * 32, **_options(source)})


register(Platform(
    name="prestashop",
    open_connector=open_connector,
    mapping=mapping,
    check=check,
))
