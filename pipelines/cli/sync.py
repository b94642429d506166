"""``shopsync sync`` and ``backfill``."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Coroutine
from datetime import UTC, date, datetime, timedelta
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load, pick_sources


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
    """Sync sources incrementally from their stored cursors.

    Exit codes: 0 done; 1 an error, or items that failed (they are sent again first next
    time); 2 the configuration; 75 the destination was down (it answered no request for
    destination.down_after_seconds): the sync stopped, nothing is lost, run it again later
    — or another run of the source holds it: this one did nothing, run it again once it ended;
    130 interrupted by Ctrl-C. Both stops say where the next run resumes.
    """
    from pipelines.engine.runner import SourceRunner

    config = load(config_path)
    reports = []
    for source in pick_sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        reports += _run(runner, runner.run(list(streams) or None, dry_run=dry_run,
                                           progress=None if as_json else _progress))
    _show(reports, as_json, dry_run)
    if any(r.total("failed") for r in reports):
        sys.exit(1)


#: how long a run stopped by Ctrl-C may take to record how it ended before the command
#: ends anyway: what each chunk recorded is durable already, and a run row left `running`
#: is marked interrupted when the next run starts
INTERRUPT_GRACE = 10.0


def _run(runner: Any, run: Coroutine[Any, Any, list[Any]], backfill: bool = False) -> list[Any]:
    """The runner's reports; Ctrl-C stops it like a dead destination does: what is recorded
    stays, and the message says where the next run resumes (exit 130).

    Ctrl-C is handled by the loop itself (``add_signal_handler``): the signal wakes the loop
    at once, whichever thread it lands on, where Python's own handler waits until the main
    thread next wakes (a retry's sleep, up to a minute). The run is cancelled and given
    ``INTERRUPT_GRACE`` seconds to record how it ended."""
    from pipelines.engine.stopped import SyncStopped

    loop = asyncio.new_event_loop()
    task = loop.create_task(run)
    interrupted = False

    def on_interrupt() -> None:
        nonlocal interrupted
        if not interrupted:
            loop.call_later(INTERRUPT_GRACE, loop.stop)  # however the run takes it
        interrupted = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        handled = True
    except (NotImplementedError, RuntimeError):  # Windows, or not the main thread: Python's
        handled = False  # own handler stays, and Ctrl-C still raises KeyboardInterrupt
    try:
        return loop.run_until_complete(task)
    except (KeyboardInterrupt, asyncio.CancelledError, RuntimeError):
        if not interrupted and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise
        interrupted = True
        resume = None if backfill else runner.resume_points()
        raise SyncStopped.interrupted(runner.source.name, resume) from None
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
        _wind_down(loop, task, INTERRUPT_GRACE if interrupted else None)


def _wind_down(loop: asyncio.AbstractEventLoop, main: asyncio.Task[Any],
               grace: float | None) -> None:
    """Cancel what still runs on ``loop`` and close it, as ``asyncio.run`` does; with a
    ``grace``, wait at most that long for the tasks (a second Ctrl-C stops waiting)."""
    try:
        tasks = {main, *asyncio.all_tasks(loop)}
        pending = [t for t in tasks if not t.done()]
        for pending_task in pending:
            pending_task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=grace))
        for done in tasks:  # how they ended is said once, by the command: not logged again
            if done.done() and not done.cancelled():
                done.exception()
        if grace is None:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()


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
    from pipelines.engine.plan import Window
    from pipelines.engine.runner import SourceRunner

    first, last = _day(start), _day(end)
    if last < first:
        raise click.BadParameter("--end is before --start")
    config = load(config_path)
    runner = SourceRunner.for_source(config, source)
    plan = runner.plan()
    streams = [s for s, rs in plan.items() if set(rs) & set(resources)]
    unknown = set(resources) - {r for rs in plan.values() for r in rs}
    if unknown:
        raise ConfigError([(f"--resource {', '.join(sorted(unknown))}: not synced for {source};"
                            f" its resources: {', '.join(r for rs in plan.values() for r in rs)}")])
    window = Window(datetime(first.year, first.month, first.day, tzinfo=UTC),
                    datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1))
    reports = _run(runner, runner.run(streams, window=window, only=set(resources),
                                      progress=None if as_json else _progress), backfill=True)
    _show(reports, as_json, False)
