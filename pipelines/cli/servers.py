"""``shopsync sandbox`` and ``shopsync fake-shop``: the local servers."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from sandbox.marketing.settings import SandboxSettings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8787, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--key",
    "keys",
    multiple=True,
    metavar="KEY[,KPI_KEY]",
    help="A shop's API key, optionally with its custom-KPI key after a comma. Repeat for more"
    " shops; each key sees only its own shop. Default: one shop with the documented keys.",
)
@click.option(
    "--accept-any-key",
    is_flag=True,
    help="Open a new empty shop for any well-formed key (isolated test runs).",
)
@click.option(
    "--visibility-delay",
    default=0.5,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds before an accepted write becomes readable.",
)
@click.option(
    "--manual-clock",
    is_flag=True,
    help="Stop the clock writes become readable by: it moves only when POST /_sandbox/clock"
    " advances it (tests that must not wait out the visibility delay).",
)
@click.option(
    "--fault-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of API requests answered 429 (with Retry-After), 500, 502 or 503.",
)
@click.option(
    "--drop-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of valid write items accepted but never applied.",
)
@click.option(
    "--disconnect-rate",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of API requests whose connection is dropped without a complete answer, half"
    " before the request is handled and half after (a write is then applied unseen).",
)
@click.option(
    "--latency", default=0.0, show_default=True, type=click.FloatRange(min=0), metavar="MS",
    help="Milliseconds added to every API answer.",
)
@click.option(
    "--retry-after", default=1, show_default=True, type=click.IntRange(min=0), metavar="SECONDS",
    help="Retry-After of injected 429 answers.",
)
@click.option("--seed", type=int, default=None, help="Seed that makes faults reproducible.")
@click.option(
    "--data",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Keep the state in this SQLite file across restarts (default: in memory).",
)
def sandbox(
    host: str,
    port: int,
    keys: tuple[str, ...],
    accept_any_key: bool,
    visibility_delay: float,
    manual_clock: bool,
    fault_rate: float,
    drop_rate: float,
    disconnect_rate: float,
    latency: float,
    retry_after: int,
    seed: int | None,
    data: Path | None,
) -> None:
    """Serve the Marketing API sandbox: a local, faithful emulator with fault injection."""
    from pydantic import ValidationError

    from sandbox.marketing.serve import serve

    try:
        settings = sandbox_settings(
            host=host, port=port, keys=keys, accept_any_key=accept_any_key,
            visibility_delay=visibility_delay, manual_clock=manual_clock, fault_rate=fault_rate,
            drop_rate=drop_rate, disconnect_rate=disconnect_rate, latency=latency,
            retry_after=retry_after, seed=seed, data=data,
        )
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            click.echo(f"error: --key: {str(err['msg']).removeprefix('Value error, ')}", err=True)
        sys.exit(2)
    serve(settings)


def sandbox_settings(*, keys: tuple[str, ...], latency: float, **options: Any) -> SandboxSettings:
    """The sandbox's settings from the options of ``shopsync sandbox`` (by their parameter
    names); a bad ``--key`` raises pydantic's ``ValidationError``."""
    from sandbox.marketing.settings import SandboxSettings, ShopKeys

    shops = {"shops": [ShopKeys.parse(k) for k in keys]} if keys else {}
    return SandboxSettings.model_validate({**options, **shops, "latency_ms": latency})


class _FakeShops(click.Group):
    """Each fake shop package under ``sandbox/shops/`` brings its command in ``command.py``,
    imported when the group is used: the fakes' imports (their web framework among them)
    cost every other ``shopsync`` command a third of a second otherwise."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return _fake_shop_packages()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _fake_shop_packages():
            return None
        command: click.Command = importlib.import_module(
            f"sandbox.shops.{cmd_name}.command").command
        return command


def _fake_shop_packages() -> list[str]:
    """The packages under ``sandbox/shops/`` that have a ``command.py``, by name."""
    import sandbox.shops

    folders = [Path(path) for path in sandbox.shops.__path__]
    return sorted(entry.name for folder in folders for entry in folder.iterdir()
                  if (entry / "__init__.py").exists() and (entry / "command.py").exists())


@click.group("fake-shop", cls=_FakeShops)
def fake_shop() -> None:
    """Serve fake shop platforms with generated, deterministic data (for dry runs and tests)."""
