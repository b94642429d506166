"""File drops: a folder (``connection.path``) with one folder of CSV, JSON Lines or Parquet
files per stream, each with its key and column mapping (``connection.streams``), which are
all the source has (``resources: all`` syncs every one); see
connectors/sources/files/README.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.engine.platforms import Env, Platform, register
from pipelines.engine.platforms.sql import defined_streams, option_problems, spec_problems

if TYPE_CHECKING:
    from connectors.http.pacing import Pacing
    from connectors.sources.base import SourceConnector
    from pipelines.engine.config import Source
    from pipelines.engine.mappings.base import PlatformMapping

#: ``connection.options`` the platform takes
OPTIONS = ("timezone", "page_size", "state_path")


def check(source: Source) -> list[str]:
    from connectors.sources.files.config import FilesStreamSpec

    connection = source.connection
    problems = []
    if not connection.path:
        problems.append("connection.path: the drop folder is required (its subfolders hold"
                        " each stream's files, like /data/drop with /data/drop/orders)")
    for name in ("url", "url_env", "key_env", "secret_env", "token_env"):
        if getattr(connection, name):
            problems.append(f"connection.{name}: a file drop takes no {name}; remove it")
    problems += option_problems(source, OPTIONS)
    problems += spec_problems(source, FilesStreamSpec)
    return problems


def open_connector(source: Source, env: Env, /, *,
                   pacer: Pacing | None = None) -> SourceConnector:
    from pathlib import Path

    from pydantic import ValidationError

    from connectors.sources.files import FilesConfig, FilesConnector
    from pipelines.engine.config import ConfigError, describe

    connection = source.connection
    options = dict(connection.options)
    if "state_path" not in options and connection.path:
        # one memory per source: two sources may read the same folder
        options["state_path"] = Path(connection.path) / ".shopsync" / f"{source.name}.json"
    try:
        config = FilesConfig.model_validate(
            {**options, "path": connection.path, "streams": connection.streams})
    except ValidationError as exc:
        raise ConfigError([f"sources.{source.name}.connection.{line}"
                           for line in describe(exc)]) from None
    return FilesConnector(config)


def mapping() -> PlatformMapping:
    from pipelines.engine.mappings.columns import FilesMapping

    return FilesMapping()


register(Platform(
    name="files",
    open_connector=open_connector,
    mapping=mapping,
    check=check,
    streams=defined_streams,
))
