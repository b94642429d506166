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

#: exit codes besides 0 (done), 1 (an error, or items that failed) and 2 (the configuration):
#: the destination was down — nothing lost, run again later (sysexits' EX_TEMPFAIL) …
EXIT_DESTINATION_DOWN = 75
#: … another run of the source holds it — nothing done, run again once it ended (likewise) …
EXIT_SOURCE_BUSY = 75
#: … and Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130

config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), default=None,
    help="The sources file (default: $SHOPSYNC_CONFIG, else ./shops.yaml).",
)


def friendly_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors a user can fix into a message and an exit code, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from sqlalchemy.exc import OperationalError

        from connectors.marketing.errors import (
            ClientConfigError,
            DestinationDown,
            MarketingApiError,
        )
        from connectors.sources.base import SourceError
        from pipelines.engine.config import ConfigError
        from pipelines.engine.state import SourceBusy
        from pipelines.engine.stopped import SyncStopped

        try:
            return fn(*args, **kwargs)
        except SyncStopped as exc:  # the one message: why, that nothing is lost, where next
            click.echo(f"error: {exc}" if exc.why == "destination down" else str(exc), err=True)
            sys.exit(EXIT_DESTINATION_DOWN if exc.why == "destination down"
                     else EXIT_INTERRUPTED)
        except SourceBusy as exc:  # another run holds the source: this one did nothing
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_SOURCE_BUSY)
        except DestinationDown as exc:
            click.echo(f"error: destination down: {exc}", err=True)
            sys.exit(EXIT_DESTINATION_DOWN)
        except KeyboardInterrupt:  # not click's "Aborted!"
            click.echo("interrupted (Ctrl-C)", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except ConfigError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except (ClientConfigError, MarketingApiError, SourceError) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except OperationalError as exc:  # the state database cannot be opened or reached
            reason = " ".join(str(exc.orig).split())
            click.echo(f"error: the state database (state_url): {reason} — `shopsync"
                       " check-config` tries it", err=True)
            sys.exit(1)

    return wrapper


def load(config_path: str | None) -> Any:
    from pipelines.engine.config import load_config

    return load_config(config_path)


def pick_sources(config: Any, names: tuple[str, ...]) -> list[Any]:
    return [config.source(n) for n in names] if names else list(config.sources)
