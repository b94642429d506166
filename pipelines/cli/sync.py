"""``shopsync sync``, ``backfill``, ``status`` and ``check-config``."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
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


def _load(config_path: str | None) -> Any:
    from pipelines.engine.config import load_config

    return load_config(config_path)


def _sources(config: Any, names: tuple[str, ...]) -> list[Any]:
    return [config.source(n) for n in names] if names else list(config.sources)


def _progress(report: Any) -> None:
    pushed = report.total("pushed")
    click.echo(
        f"  {report.source}/{report.stream}: {report.records} records read, {pushed} pushed,"
        f" {report.total('accepted')} accepted", err=True,
    )


COLUMNS = ("extracted", "unchanged", "quarantined", "pushed", "accepted", "rejected", "failed")


def report_table(reports: list[Any]) -> str:
    lines = ["source/stream/resource".ljust(36) + "".join(c.rjust(12) for c in COLUMNS)]
    for report in reports:
        for resource, counts in report.counts.items():
            name = f"{report.source}/{report.stream}/{resource}"
            lines.append(name.ljust(36) + "".join(str(counts.get(c, 0)).rjust(12) for c in COLUMNS))
        lines.append(f"  {report.records} records in {report.seconds:.1f}s"
                     f" ({report.records_per_second:.0f}/s)")
    return "\n".join(lines)


@click.command()
@config_option
@click.option("--source", "sources", multiple=True, help="Sync only this source (repeatable).")
@click.option("--stream", "streams", multiple=True, help="Sync only this stream (repeatable).")
@click.option("--dry-run", is_flag=True,
              help="Read, map, validate and diff; show what would be sent; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly_errors
def sync(config_path: str | None, sources: tuple[str, ...], streams: tuple[str, ...],
         dry_run: bool, as_json: bool) -> None:
    """Sync sources incrementally from their stored cursors."""
    from pipelines.engine.runner import SourceRunner

    config = _load(config_path)
    reports = []
    for source in _sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        reports += asyncio.run(runner.run(list(streams) or None, dry_run=dry_run,
                                          progress=None if as_json else _progress))
    _show(reports, as_json, dry_run)
    if any(r.total("failed") for r in reports):
        sys.exit(1)


def _show(reports: list[Any], as_json: bool, dry_run: bool) -> None:
    if as_json:
        click.echo(json.dumps([{
            "source": r.source, "stream": r.stream, "records": r.records,
            "seconds": round(r.seconds, 3), "dry_run": r.dry_run,
            "counts": {k: dict(v) for k, v in r.counts.items()},
            "samples": r.samples if dry_run else {},
        } for r in reports], indent=2, default=str))
        return
    click.echo(report_table(reports))
    if dry_run:
        click.echo("\ndry run: nothing was written. Sample payloads that would be sent:")
        for report in reports:
            for resource, samples in report.samples.items():
                for sample in samples:
                    click.echo(f"{resource}: {json.dumps(sample, ensure_ascii=False)}")


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a date like 2024-01-31") from None


@click.command()
@config_option
@click.option("--source", required=True, help="The source to re-read.")
@click.option("--resource", "resources", multiple=True, required=True,
              help="Target resource to backfill (repeatable), e.g. orders.")
@click.option("--start", required=True, help="First day of change time (YYYY-MM-DD).")
@click.option("--end", required=True, help="Last day of change time, included (YYYY-MM-DD).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly_errors
def backfill(config_path: str | None, source: str, resources: tuple[str, ...], start: str,
             end: str, as_json: bool) -> None:
    """Re-read a window of change time and push what changed, leaving the cursor alone."""
    from pipelines.engine.config import ConfigError
    from pipelines.engine.runner import SourceRunner
    from pipelines.engine.sync import Window

    first, last = _day(start), _day(end)
    if last < first:
        raise click.BadParameter("--end is before --start")
    config = _load(config_path)
    runner = SourceRunner.for_source(config, source)
    plan = runner.plan()
    streams = [s for s, rs in plan.items() if set(rs) & set(resources)]
    unknown = set(resources) - {r for rs in plan.values() for r in rs}
    if unknown:
        raise ConfigError([(f"--resource {', '.join(sorted(unknown))}: not synced for {source};"
                            f" its resources: {', '.join(r for rs in plan.values() for r in rs)}")])
    window = Window(datetime(first.year, first.month, first.day, tzinfo=UTC),
                    datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1))
    reports = asyncio.run(runner.run(streams, window=window, only=set(resources),
                                     progress=None if as_json else _progress))
    _show(reports, as_json, False)


@click.command()
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@friendly_errors
def status(config_path: str | None, as_json: bool) -> None:
    """Per source: cursors, items by state, why items were held back, reconciliation trend."""
    from pipelines.engine.report import summarize
    from pipelines.engine.runner import SourceRunner

    config = _load(config_path)
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


@click.command("check-config")
@config_option
@friendly_errors
def check_config(config_path: str | None) -> None:
    """Validate the configuration and try every connection's credentials."""
    import os

    from pipelines.engine.config import ConfigError
    from pipelines.engine.runner import open_client, open_connector, selected_resources

    config = _load(config_path)
    problems: list[str] = []

    async def probe() -> None:
        try:
            async with open_client(config, os.environ) as client:
                await client.list_data_sources()
            click.echo(f"ok    destination {config.destination.base_url}")
        # any failure (address, key, network, the API's answer) is reported as one line,
        # and the sources are still probed
        except Exception as exc:  # noqa: BLE001
            problems.append(f"destination {config.destination.base_url}: {exc}")
        for source in config.sources:
            try:
                selected_resources(source)
                connector = open_connector(source, os.environ)
                try:
                    await connector.check()
                finally:
                    await connector.aclose()
                click.echo(f"ok    source {source.name} ({source.platform} {source.connection.url})")
            except ConfigError as exc:
                problems.extend(f"source {source.name}: {p}" for p in exc.problems)
            # any other failure (connection, credentials, the platform's answer) is reported
            # as one line, and the remaining sources are still probed
            except Exception as exc:  # noqa: BLE001
                problems.append(f"source {source.name}: {exc}")

    asyncio.run(probe())
    for problem in problems:
        click.echo(f"FAIL  {problem}", err=True)
    if problems:
        sys.exit(1)


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

    config = _load(config_path)
    out: dict[str, Any] = {}
    gaps: dict[str, list[str]] = {}
    for source in _sources(config, sources):
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
