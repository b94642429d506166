"""What every command shares: the ``--config`` option, loading the file, choosing sources,
and turning the errors a user can fix into one line and an exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import click

P = ParamSpec("P")
R = TypeVar("R")

config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), default=None,
    help="The sources file (default: $SHOPSYNC_CONFIG, else ./shops.yaml).",
)


def friendly_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors a user can fix into a message and an exit code, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from connectors.marketing.errors import ClientConfigError, MarketingApiError
        from connectors.sources.base import SourceError
        from pipelines.engine.config import ConfigError

        try:
            return fn(*args, **kwargs)
        except ConfigError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except (ClientConfigError, MarketingApiError, SourceError) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    return wrapper


def load(config_path: str | None) -> Any:
    from pipelines.engine.config import load_config

    return load_config(config_path)


def pick_sources(config: Any, names: tuple[str, ...]) -> list[Any]:
    return [config.source(n) for n in names] if names else list(config.sources)
