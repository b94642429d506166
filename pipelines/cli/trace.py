"""``shopsync trace``: one item's story, by its id."""

from __future__ import annotations

import json
import sys

import click

from pipelines.cli.common import config_option, friendly_errors, load


@click.command()
@config_option
@click.option("--source", required=True, help="The source the item comes from.")
@click.option("--resource", required=True, help="Its target resource (orders, customers…).")
@click.argument("item_id")
@click.option("--json", "as_json", is_flag=True, help="Print the events as JSON.")
@friendly_errors
def trace(config_path: str | None, source: str, resource: str, item_id: str,
          as_json: bool) -> None:
    """Every step the ledger knows for one item, oldest first: read from the source (when,
    in which run), mapped, held back or sent, accepted or refused (with the API's errors),
    seen at the destination, confirmed, re-sent, parked, deleted, found missing by an audit.

    ITEM_ID is the item's key in the ledger (as `shopsync rejections` shows it) or the id of
    the source record it came from; a record that became several items (a product in two
    languages) shows each. Exit 1 when no item has that id."""
    from pipelines.engine.runner import SourceRunner
    from pipelines.engine.trace import stories

    config = load(config_path)
    runner = SourceRunner.for_source(config, source)
    try:
        found = stories(runner.state, source, resource, item_id)
    finally:
        runner.state.close()
    if not found:
        click.echo(f"no item {item_id!r} in {source}/{resource}: neither an item key nor a"
                   " source record id the ledger knows", err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps([story.as_dict() for story in found], indent=2))
        return
    click.echo("\n\n".join(story.text() for story in found))
