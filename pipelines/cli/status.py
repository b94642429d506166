"""``shopsync status``."""

from __future__ import annotations

import json
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load


@click.command()
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly_errors
def status(config_path: str | None, as_json: bool) -> None:
    """Per source: cursors, items by state, why items were held back, reconciliation trend."""
    from pipelines.engine.report import summarize
    from pipelines.engine.runner import SourceRunner

    config = load(config_path)
    out: dict[str, Any] = {}
    for source in config.sources:
        runner = SourceRunner.for_source(config, source.name)
        state = runner.state
        try:
            cursors = {}
            for stream in runner.plan():
                position = state.get_cursor(source.name, stream)
                cursors[stream] = (f"{position.changed_at.isoformat()} #{position.record_id}"
                                   if position else None)
            summary = summarize(state, source.name)
            runs = [{"stream": r.resource, "kind": r.kind, "status": r.status,
                     "started_at": str(r.started_at), "counts": r.counts}
                    for r in state.recent_runs(source.name, limit=5)]
        finally:
            state.close()
        out[source.name] = {"cursors": cursors, "items": summary.items,
                            "held_back": summary.reasons, "runs": runs,
                            "markdown": summary.markdown()}
    if as_json:
        click.echo(json.dumps({k: {f: v for f, v in info.items() if f != "markdown"}
                               for k, info in out.items()}, indent=2, default=str))
        return
    for info in out.values():
        click.echo(info["markdown"])
        click.echo("")
        for stream, cursor in info["cursors"].items():
            click.echo(f"cursor {stream:<12} {cursor or '(not synced yet)'}")
        click.echo("")
