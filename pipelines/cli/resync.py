"""``shopsync resync``: a full refresh of a source."""

from __future__ import annotations

import asyncio
import sys

import click

from pipelines.cli.common import config_option, friendly_errors, load
from pipelines.cli.sync import _progress, _show


@click.command()
@config_option
@click.option("--source", required=True, help="The source to send again.")
@click.option("--resource", "resources", multiple=True,
              help="Only this target resource (repeatable), e.g. orders; default: all.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly_errors
def resync(config_path: str | None, source: str, resources: tuple[str, ...],
           as_json: bool) -> None:
    """Send every record again, mapped afresh, whatever the ledger holds (a full refresh,
    e.g. after the destination lost data); the cursors stay where they are.

    `shopsync reconcile` then confirms what arrived."""
    from pipelines.engine.audit import resync as full_refresh
    from pipelines.engine.runner import SourceRunner

    runner = SourceRunner.for_source(load(config_path), source)
    try:
        reports = asyncio.run(full_refresh(runner, resources,
                                           progress=None if as_json else _progress))
    finally:
        runner.state.close()
    _show(reports, as_json, False)
    if any(r.total("failed") for r in reports):
        sys.exit(1)
