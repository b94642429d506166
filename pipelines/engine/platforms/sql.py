"""SQL databases through SQLAlchemy: a URL (``connection.url``, or ``connection.url_env``
when it holds a password) and, per stream, a table or query with its key, cursor and
column mapping (``connection.streams``), which are all the source has (``resources: all``
syncs every one); see connectors/sources/sql/README.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipelines.engine.platforms import Env, Platform, register, unknown_options

if TYPE_CHECKING:
    from connectors.http.pacing import Pacing
    from connectors.sources.base import SourceConnector
    from pipelines.engine.config import Source
    from pipelines.engine.mappings.base import PlatformMapping

#: ``connection.options`` the platform takes
OPTIONS = ("timezone", "page_size", "allow_unencrypted")


def defined_streams(source: Source) -> dict[str, tuple[str, ...]]:
    """The streams ``connection.streams`` defines, each feeding the resource of its name,
    reference data first (``STREAM_ORDER``, from the table of who refers to whom): the user
    decides what the source has, so ``resources: all`` means these (shared by the
    ``files`` platform)."""
    from pipelines.engine.mappings.columns import STREAM_ORDER

    return {s: (s,) for s in STREAM_ORDER if s in source.connection.streams}


def spec_problems(source: Source, model: Any) -> list[str]:
    """Problems of each stream's definition (``model`` validates one) and of its targets,
    and resources listed that no stream defines."""
    from pydantic import ValidationError

    from pipelines.engine.config import describe
    from pipelines.engine.mappings.columns import STREAM_ORDER, target_problems

    streams = source.connection.streams
    problems: list[str] = []
    if not streams:
        problems.append("connection.streams: define at least one stream (like `orders:` with"
                        " its table or query, key, cursor and columns)")
    listed = [] if "all" in source.resources else source.resources
    undefined = [r for r in listed if r in STREAM_ORDER and r not in streams]
    defined = ", ".join(defined_streams(source))
    if defined and undefined:
        problems.append(f"resources: no stream of connection.streams feeds"
                        f" {', '.join(undefined)} — define a stream for each, or list only"
                        f" resources that have one (resources: [{defined}]; `all` means every"
                        f" defined stream)")
    for stream, spec in streams.items():
        where = f"connection.streams.{stream}"
        if stream not in STREAM_ORDER:
            problems += target_problems(stream, spec, where)
            continue
        try:
            model.model_validate(spec)
        except ValidationError as exc:
            problems += [f"{where}.{line}" if not line.startswith("file") else
                         f"{where}: {line.split(': ', 1)[-1]}" for line in describe(exc)]
        problems += target_problems(stream, spec, where)
    return problems


def option_problems(source: Source, known: tuple[str, ...]) -> list[str]:
    """Unknown ``connection.options`` and a time zone the system does not know (shared by
    the ``files`` platform)."""
    from connectors.sources.sql.columns import zone

    problems = unknown_options(source, known)
    options = source.connection.options
    if "timezone" in options:
        try:
            zone(str(options["timezone"]))
        except ValueError as exc:
            problems.append(f"connection.options.timezone: {exc}")
    return problems


def check(source: Source) -> list[str]:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from connectors.sources.sql.config import SqlStreamSpec

    connection = source.connection
    problems = []
    if bool(connection.url) == bool(connection.url_env):
        problems.append("connection.url: give the database's SQLAlchemy URL in `url` (like"
                        " sqlite:////data/shop.db), or in `url_env` the name of the environment"
                        " variable that holds it when it has a password")
    elif connection.url:
        try:
            if make_url(connection.url).password:
                problems.append("connection.url: holds a password — put the URL in an"
                                " environment variable and name it in connection.url_env")
        except ArgumentError:
            problems.append("connection.url: not a SQLAlchemy URL (like"
                            " postgresql+psycopg://user@host/shop or sqlite:////data/shop.db)")
    problems += option_problems(source, OPTIONS)
    problems += spec_problems(source, SqlStreamSpec)
    return problems


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from pydantic import SecretStr, ValidationError

    from connectors.sources.sql import SqlConfig, SqlConnector
    from pipelines.engine.config import ConfigError, describe
    from pipelines.engine.secrets import secret_from

    connection = source.connection
    where = f"sources.{source.name}.connection"
    url = (SecretStr(connection.url) if connection.url
           else secret_from(env, connection.url_env, f"{where}.url_env"))
    try:
        config = SqlConfig.model_validate(
            {**connection.options, "url": url, "streams": connection.streams})
    except ValidationError as exc:
        raise ConfigError([f"{where}.{line}" for line in describe(exc)]) from None
    return SqlConnector(config)


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.columns import SqlMapping

    return SqlMapping()


register(Platform(
    name="sql",
    open_connector=open_connector,
    mapping=mapping,
    check=check,
    streams=defined_streams,
))
