"""``shopsync rejections``: the items held back — refused by the API, parked after too many
attempts, or quarantined (invalid, never sent) — to read with their reasons, export, and send
again after a fix."""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from collections.abc import Iterator
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load, pick_sources

#: what ``retry`` sends again: quarantined items wait for their source record to change
STATUSES = ("rejected", "parked")
#: ``--state`` choices; ``all`` is every state a person must look at
STATES = ("quarantined", "rejected", "parked")


def _states(state: str) -> tuple[str, ...]:
    return STATES if state == "all" else (state,)


def _entries(config: Any, sources: tuple[str, ...], resource: str | None,
             states: tuple[str, ...] = STATES) -> Iterator[dict[str, Any]]:
    from pipelines.engine.runner import SourceRunner
    from pipelines.engine.state import ItemStatus

    for source in pick_sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        try:
            resources = [resource] if resource else list(runner.state.counts(source.name))
            for name in resources:
                after = None
                while True:
                    page = runner.state.entries(
                        source.name, name, {ItemStatus(s) for s in states}, limit=500,
                        after_key=after)
                    if not page:
                        break
                    after = page[-1].key
                    for entry in page:
                        yield {
                            "source": source.name, "resource": name, "key": entry.key,
                            "status": entry.status.value, "attempts": entry.attempts,
                            "source_record_id": entry.source_record_id,
                            "errors": entry.errors, "payload": entry.payload,
                            "updated_at": entry.updated_at.isoformat(),
                        }
        finally:
            runner.state.close()


source_option = click.option("--source", "sources", multiple=True, help="Only this source.")
resource_option = click.option("--resource", default=None, help="Only this target resource.")
state_option = click.option(
    "--state", type=click.Choice([*STATES, "all"]), default="all", show_default=True,
    help="Which held-back items: quarantined (invalid, never sent), rejected (refused by the"
         " API), parked (given up on after the allowed attempts), or all of them.")


@click.group()
def rejections() -> None:
    """Items held back (quarantined, rejected, parked): by reason, one by one, exported, or
    sent again."""


@rejections.command("list")
@config_option
@source_option
@resource_option
@state_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly_errors
def list_(config_path: str | None, sources: tuple[str, ...], resource: str | None, state: str,
          as_json: bool) -> None:
    """Held-back items grouped by reason (the API's error, or why they were quarantined)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for entry in _entries(load(config_path), sources, resource, _states(state)):
        for error in entry["errors"] or ["(no message)"]:
            groups.setdefault((entry["source"], entry["resource"], error), []).append(entry)
    rows: list[dict[str, Any]] = [
        {"source": s, "resource": r, "error": e, "count": len(items),
         "statuses": sorted({i["status"] for i in items}),
         "keys": [i["key"] for i in items[:5]]}
        for (s, r, e), items in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"no {' or '.join(_states(state))} items")
    for row in rows:
        click.echo(f"{row['count']:>6}  {row['source']}/{row['resource']}  {row['error']}"
                   f"  (e.g. {', '.join(row['keys'])}; {', '.join(row['statuses'])})")


@rejections.command()
@config_option
@source_option
@click.option("--resource", required=True, help="The target resource of the item.")
@click.argument("key")
@friendly_errors
def show(config_path: str | None, sources: tuple[str, ...], resource: str, key: str) -> None:
    """One held-back item: its reasons, its payload (as sent or built), its source record."""
    for entry in _entries(load(config_path), sources, resource):
        if entry["key"] == key:
            click.echo(json.dumps(entry, indent=2, ensure_ascii=False))
            return
    click.echo(f"error: no quarantined, rejected or parked {resource} item with key {key!r}",
               err=True)
    sys.exit(1)


@rejections.command()
@config_option
@source_option
@resource_option
@state_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv",
              show_default=True)
@click.option("--output", type=click.File("w"), default="-", help="File to write (default: stdout).")
@friendly_errors
def export(config_path: str | None, sources: tuple[str, ...], resource: str | None, state: str,
           fmt: str, output: Any) -> None:
    """Every held-back item, with its reasons and payload, as CSV or JSON."""
    entries = list(_entries(load(config_path), sources, resource, _states(state)))
    if fmt == "json":
        json.dump(entries, output, indent=2, ensure_ascii=False)
        output.write("\n")
        return
    columns = ["source", "resource", "key", "status", "attempts", "source_record_id", "errors",
               "payload", "updated_at"]
    writer = csv.DictWriter(output, fieldnames=columns)
    writer.writeheader()
    for entry in entries:
        writer.writerow({**entry, "errors": " | ".join(entry["errors"]),
                         "payload": json.dumps(entry["payload"], ensure_ascii=False)})


@rejections.command()
@config_option
@source_option
@click.option("--resource", "resources", multiple=True, help="Only these resources.")
@friendly_errors
def retry(config_path: str | None, sources: tuple[str, ...], resources: tuple[str, ...]) -> None:
    """Map rejected and parked items again from the source and send them (after a fix)."""
    from pipelines.engine.runner import SourceRunner

    config = load(config_path)
    for source in pick_sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        try:
            reports = asyncio.run(runner.retry_rejections(list(resources) or None))
            left = sum(n for r, c in runner.state.counts(source.name).items()
                       for s, n in c.items() if s in STATUSES)
        finally:
            runner.state.close()
        sent = sum(r.total("pushed") for r in reports)
        accepted = sum(r.total("accepted") for r in reports)
        click.echo(f"{source.name}: {sent} sent again, {accepted} accepted, {left} still"
                   " rejected or parked")
