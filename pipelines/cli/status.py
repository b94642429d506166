"""``shopsync status``."""

from __future__ import annotations

import functools
import json
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load


def _read_in_full(runner: Any) -> set[str]:
    """The streams the connector reads whole each run (no cursor by design); empty when the
    connector cannot be opened here (its secrets are not in this environment)."""
    import asyncio

    from connectors.sources.base import SourceError
    from pipelines.engine.config import ConfigError
    from pipelines.engine.runner import open_connector

    try:
        connector = open_connector(runner.source, runner.env)
    except (ConfigError, SourceError):
        return set()
    try:
        return {name for name, info in connector.streams().items() if not info.incremental}
    finally:
        asyncio.run(connector.aclose())


def _position(cursor: Any, full: bool, last: Any) -> str:
    """Where a stream stands: its cursor, or when it was last read."""
    from pipelines.engine.plan import stands_at

    if cursor is not None:
        return stands_at(cursor)
    if last is None:
        return "(not synced yet)"
    when = f"{(last.finished_at or last.started_at):%Y-%m-%d %H:%M:%S} UTC ({last.status})"
    if full:
        return f"read in full each run, last read {when}"
    return f"no record read yet, last run {when}"


@click.command()
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly_errors
def status(config_path: str | None, as_json: bool) -> None:
    """Per source: items by state, why items were held back, the reconciliation trend, the
    last audit of each resource, and where each stream stands."""
    from pipelines.engine.plan import resume_of, stands_at
    from pipelines.engine.report import summarize
    from pipelines.engine.runner import SourceRunner

    config = load(config_path)
    out: dict[str, Any] = {}
    for source in config.sources:
        runner = SourceRunner.for_source(config, source.name)
        state = runner.state
        try:
            cursors, positions = {}, {}
            full = _read_in_full(runner)
            last = state.latest_runs(source.name, "sync")
            for stream in runner.plan():
                position = resume_of(functools.partial(state.get_cursor, source.name), stream)
                cursors[stream] = stands_at(position) if position is not None else None
                positions[stream] = _position(position, stream in full, last.get(stream))
            summary = summarize(state, source.name)
            runs = [{"stream": r.resource, "kind": r.kind, "status": r.status,
                     "started_at": str(r.started_at), "counts": r.counts}
                    for r in state.recent_runs(source.name, limit=5)]
        finally:
            state.close()
        out[source.name] = {"cursors": cursors, "positions": positions,
                            "items": summary.items, "held_back": summary.reasons,
                            "audits": summary.audits, "runs": runs,
                            "markdown": summary.markdown()}
    if as_json:
        click.echo(json.dumps({k: {f: v for f, v in info.items() if f != "markdown"}
                               for k, info in out.items()}, indent=2, default=str))
        return
    for info in out.values():
        click.echo(info["markdown"])
        click.echo("")
        for stream, position in info["positions"].items():
            click.echo(f"cursor {stream:<12} {position}")
        if info["runs"]:
            click.echo("")
            click.echo("recent runs")
        for run in info["runs"]:
            # an interrupted run (killed, or Ctrl-C) shows here once the next run has started
            click.echo(f"  {run['started_at'][:19]}  {run['kind']:<9} {run['stream'] or '':<12}"
                       f" {run['status']}")
        click.echo("")
