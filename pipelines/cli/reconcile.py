"""``shopsync reconcile``."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from pipelines.cli.common import config_option, friendly_errors, load, pick_sources

#: ``shopsync reconcile``'s exit codes (also in its --help and the README)
CONFIRMED, GAPS, NOT_CHECKED = 0, 1, 3


@dataclass
class SourceCheck:
    """What one source's reconciliation found, for the terminal or JSON."""

    resources: dict[str, Any] = field(default_factory=dict)
    audit: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)


async def _check(runner: Any, audit: bool, sample: int | None, deadline: float,
                 max_resends: int) -> SourceCheck:
    """Audit (if asked), reconcile and measure completeness; a step that fails for want of
    an answer (the API's or the source's) is named in ``not_checked`` and the next runs."""
    from connectors.marketing.errors import MarketingApiError
    from connectors.sources.base import SourceError
    from pipelines.engine.audit import audit as run_audit

    out = SourceCheck()
    hours = runner.config.reconciliation.completeness_hours
    if audit:
        try:
            audited = await run_audit(runner, sample=sample)
            out.audit = audited.as_dict()
            out.notes += audited.notes
            out.gaps += audited.gaps()
            out.not_checked += audited.not_checked()
        except (MarketingApiError, SourceError) as exc:
            out.not_checked.append(f"audit: {exc}")
    try:
        report = await runner.reconcile(deadline_seconds=deadline, max_resends=max_resends)
        out.resources = report.as_dict()
        out.not_checked += report.not_checked()
    except (MarketingApiError, SourceError) as exc:
        out.not_checked.append(f"read-back: {exc}")
    for scope, window in (("", None), (f"in the last {hours:g} h of changes: ",
                                       runner.recent_window())):
        try:
            rows = await runner.completeness(window)
            out.gaps += [f"{scope}{gap}" for row in rows for gap in row.gaps]
        except (MarketingApiError, SourceError) as exc:
            out.not_checked.append(f"completeness{' ' + scope.rstrip(': ') if scope else ''}:"
                                   f" {exc}")
    return out


@click.command(epilog="""\b
Exit codes:
  0  everything was checked and confirmed
  1  gaps remain: items not confirmed yet, held back (quarantined, rejected,
     parked) or never extracted, or found missing by the audit and not sent
     again (1 wins over 3)
  3  some items or steps could not be checked (a read that failed after its
     retries, a source that did not answer): they are kept for the next run
  2  the configuration cannot be used
  75 another run of the source holds it (a sync, say): nothing was done;
     run it again once that run has ended""")
@config_option
@click.option("--source", "sources", multiple=True, help="Reconcile only this source (repeatable).")
@click.option("--deadline", default=None, type=click.FloatRange(min=0),
              help="Seconds an accepted item may take to become visible before it is re-sent"
                   " (default: reconciliation.deadline_seconds of the config, 600).")
@click.option("--max-resends", default=None, type=click.IntRange(min=0),
              help="Re-sends before an item is parked for a person to look at (default:"
                   " reconciliation.max_resends of the config, 3).")
@click.option("--audit", is_flag=True,
              help="First re-read the items the ledger holds as visible; send again what is"
                   " missing or different at the destination.")
@click.option("--sample", default=None, type=click.IntRange(min=1),
              help="With --audit: only this many items per resource, those checked longest"
                   " ago first (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly_errors
def reconcile(config_path: str | None, sources: tuple[str, ...], deadline: float | None,
              max_resends: int | None, audit: bool, sample: int | None, as_json: bool) -> None:
    """Confirm accepted items became visible; re-send those that did not in time; with
    --audit, check that what was confirmed is still there.

    Per resource it shows how long after acceptance items were confirmed (which depends on
    when reconcile runs) and their visibility lag (acceptance → first seen): an upper bound,
    with the resolution the read-backs allow (tuning.probe_seconds measures it finely)."""
    from pipelines.engine.runner import SourceRunner

    if sample is not None and not audit:
        raise click.UsageError("--sample goes with --audit")
    config = load(config_path)
    settings = config.reconciliation
    out: dict[str, SourceCheck] = {}
    for source in pick_sources(config, sources):
        runner = SourceRunner.for_source(config, source.name)
        try:
            out[source.name] = asyncio.run(_check(
                runner, audit, sample,
                settings.deadline_seconds if deadline is None else deadline,
                settings.max_resends if max_resends is None else max_resends))
        finally:
            runner.state.close()
    gaps = any(c.gaps for c in out.values())
    unchecked = any(c.not_checked for c in out.values())
    if as_json:
        click.echo(json.dumps({name: {"resources": c.resources, "audit": c.audit,
                                      "notes": c.notes, "gaps": c.gaps,
                                      "not_checked": c.not_checked}
                               for name, c in out.items()}, indent=2))
    else:
        _show(out)
    sys.exit(GAPS if gaps else NOT_CHECKED if unchecked else CONFIRMED)


def _show(out: dict[str, SourceCheck]) -> None:
    from pipelines.engine.lag import describe_lag

    columns = ("checked", "visible", "waiting", "resent", "parked", "unchecked")
    audited = ("checked", "missing", "different", "resent", "unchecked")
    for name, check in out.items():
        click.echo(name)
        if check.audit:
            click.echo("  audit".ljust(16) + "".join(c.rjust(10) for c in audited))
            for resource, row in check.audit.items():
                note = "" if row["verifiable"] else "   (the API does not list it: not verifiable)"
                click.echo("  " + resource.ljust(14)
                           + "".join(str(row[c]).rjust(10) for c in audited) + note)
        click.echo("  " + "resource".ljust(14) + "".join(c.rjust(10) for c in columns)
                   + "   " + "confirmed after p95".ljust(21) + "visibility lag p95")
        for resource, row in check.resources.items():
            lag, waited = row["visibility_lag_seconds"], row["time_to_confirmation_seconds"]
            confirmed = "-" if waited["p95"] is None else f"{waited['p95']:.1f} s"
            note = "" if row["verifiable"] else "   (the API does not list it: not verifiable)"
            click.echo("  " + resource.ljust(14) + "".join(str(row[c]).rjust(10) for c in columns)
                       + f"   {confirmed.ljust(21)}{describe_lag(lag['p95'], lag['resolution'])}"
                       + note)
        for note in check.notes:
            click.echo(f"  audit: {note}")
        for gap in check.gaps:
            click.echo(f"  gap: {gap}")
        for line in check.not_checked:
            click.echo(f"  not checked: {line}")
