"""``shopsync reconcile``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load, pick_sources


@click.command()
@config_option
@click.option("--source", "sources", multiple=True, help="Reconcile only this source (repeatable).")
@click.option("--deadline", default=600.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds an accepted item may take to become visible before it is re-sent.")
@click.option("--max-resends", default=3, show_default=True, type=click.IntRange(min=0),
              help="Re-sends before an item is parked for a person to look at.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly_errors
def reconcile(config_path: str | None, sources: tuple[str, ...], deadline: float,
              max_resends: int, as_json: bool) -> None:
    """Confirm accepted items became visible; re-send those that did not in time."""
    from pipelines.engine.runner import SourceRunner

    config = load(config_path)
    out: dict[str, Any] = {}
    gaps: dict[str, list[str]] = {}
    for source in pick_sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        report = asyncio.run(runner.reconcile(deadline_seconds=deadline, max_resends=max_resends))
        complete = asyncio.run(runner.completeness())
        recent = asyncio.run(runner.completeness(runner.recent_window()))
        out[source.name] = report.as_dict()
        gaps[source.name] = [gap for row in complete for gap in row.gaps] + [
            f"in the last {config.reconciliation.completeness_hours:g} h of changes: {gap}"
            for row in recent for gap in row.gaps]
        runner.state.close()
    if as_json:
        click.echo(json.dumps({name: {"resources": out[name], "gaps": gaps[name]}
                               for name in out}, indent=2))
        return
    columns = ("checked", "visible", "waiting", "resent", "parked")
    for name, resources in out.items():
        click.echo(name)
        click.echo("  " + "resource".ljust(14) + "".join(c.rjust(9) for c in columns)
                   + "   lag p50/p95/max (s)")
        for resource, row in resources.items():
            lag = row["lag_seconds"]
            lags = "/".join("-" if lag[k] is None else f"{lag[k]:.1f}" for k in ("p50", "p95", "max"))
            note = "" if row["verifiable"] else "   (the API does not list it: not verifiable)"
            click.echo("  " + resource.ljust(14) + "".join(str(row[c]).rjust(9) for c in columns)
                       + f"   {lags}{note}")
        for gap in gaps[name]:
            click.echo(f"  gap: {gap}")
