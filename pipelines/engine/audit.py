"""The destination is the truth: audits of what the ledger holds as visible, and full
refreshes.

The ledger remembers what the API confirmed; the API can lose it since (a restore, an
account reset, someone deleting or editing items). An audit reads visible items back — all
of them, or a sample of those checked longest ago — and compares each with what it read back
as when it was confirmed: what is missing or different is reported and sent again, mapped
afresh from the source (the ledger keeps no payload of a visible item) without moving any
cursor. Each audited resource leaves a run of kind ``audit`` with its figures, which
``shopsync status`` shows.

A resync sends everything again the same way: every record of every stream (or of the
streams feeding some resources), all time, whatever the ledger says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import MarketingApiError
from connectors.sources.base import SourceError
from pipelines.engine.config import ConfigError
from pipelines.engine.destination import resolve_data_source
from pipelines.engine.plan import Window
from pipelines.engine.read_back import PAGE, Reader
from pipelines.engine.runner import SourceRunner, open_client
from pipelines.engine.state import ItemStatus, LedgerEntry
from pipelines.engine.stream_report import StreamReport

#: the start of a window that holds every change time: a full refresh, not a backfill
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FIGURES = ("checked", "missing", "different", "resent", "unchecked")


def all_time(now: datetime) -> Window:
    """A window of change time holding every record up to ``now``."""
    return Window(EPOCH, now)


@dataclass
class AuditCheck:
    """What an audit found of one resource."""

    checked: int = 0
    missing: int = 0
    different: int = 0
    #: items sent again (mapped afresh from the source) of the missing and different ones
    resent: int = 0
    #: items whose read-back failed: not checked this time
    unchecked: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    verifiable: bool = True
    sample: bool = False
    #: keys of the missing and different items, to send again
    repair: set[str] = field(default_factory=set)

    def figures(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in FIGURES} | {"sample": int(self.sample)}


@dataclass
class AuditReport:
    source: str
    resources: dict[str, AuditCheck] = field(default_factory=dict)
    #: what the audit could not do, in words
    problems: list[str] = field(default_factory=list)
    #: what it found beyond the figures, in words
    notes: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        return {name: sum(getattr(c, name) for c in self.resources.values()) for name in FIGURES}

    def gaps(self) -> list[str]:
        """Items found missing or different that could not be sent again."""
        return [f"{c.missing + c.different - c.resent} {resource} items missing or different"
                " at the destination could not be sent again (gone from the source, or"
                " refused: see `shopsync status`)"
                for resource, c in self.resources.items()
                if c.missing + c.different > c.resent]

    def not_checked(self) -> list[str]:
        lines = [f"audit: {c.unchecked} visible {resource} items could not be read back: "
                 + "; ".join(e for e, _ in c.failures.most_common(3))
                 for resource, c in self.resources.items() if c.unchecked]
        lines += [f"audit: {resource} cannot be read back (the API does not list it)"
                  for resource, c in self.resources.items() if not c.verifiable]
        return lines + self.problems

    def as_dict(self) -> dict[str, Any]:
        return {resource: {**c.figures(), "verifiable": c.verifiable,
                           "failures": dict(c.failures)}
                for resource, c in self.resources.items()}


class Auditor:
    """Compares visible items with the destination; finds what is missing or different."""

    def __init__(self, runner: SourceRunner, client: MarketingClient,
                 id_data_source: int | None) -> None:
        self.runner = runner
        self.source = runner.source.name
        self.state = runner.state
        self.id_data_source = id_data_source
        self.reader = Reader(client, id_data_source, runner.source.tuning.concurrency)

    async def resource(self, resource: str, sample: int | None) -> AuditCheck:
        """Audit every visible item of ``resource``, or the ``sample`` checked longest ago."""
        check = AuditCheck(sample=sample is not None)
        if sample is not None:
            await self._page(resource, self.state.least_recently_checked(
                self.source, resource, sample), check)
            return check
        after: str | None = None
        while entries := self.state.entries(self.source, resource, {ItemStatus.VISIBLE},
                                            limit=PAGE, after_key=after):
            after = entries[-1].key
            await self._page(resource, entries, check)
            if not check.verifiable:
                break
        return check

    async def _page(self, resource: str, entries: list[LedgerEntry], check: AuditCheck) -> None:
        if not entries:
            return
        if self.id_data_source is None:  # the data source itself is gone: so is every item
            check.checked += len(entries)
            check.missing += len(entries)
            check.repair.update(e.key for e in entries)
            self.state.note_audit(self.source, resource, [e.key for e in entries], [])
            return
        found = await self.reader.read_back(resource, entries)
        if not found.served:
            check.verifiable = False
            return
        check.unchecked += len(found.unread)
        check.failures.update(found.errors)
        expected = self.state.readbacks(self.source, resource, [e.key for e in found.read])
        as_before: dict[str, str] = {}
        missing, different = [], []
        for entry in found.read:
            check.checked += 1
            shown = found.seen.get(entry.key)
            if shown is None:
                missing.append(entry.key)
            elif entry.key in expected and expected[entry.key] != shown:
                different.append(entry.key)
            else:
                # as confirmed (or, confirmed before read-backs were kept: as it is now)
                as_before[entry.key] = shown
        check.missing += len(missing)
        check.different += len(different)
        check.repair.update(missing + different)
        self.state.note_audit(self.source, resource, missing, different)
        self.state.keep_readbacks(self.source, resource, as_before)


async def audit(runner: SourceRunner, *, sample: int | None = None,
                resources: Sequence[str] | None = None) -> AuditReport:
    """Audit the source's resources (every visible item, or ``sample`` per resource) and
    send what is missing or different again; each resource's figures are kept as a run of
    kind ``audit``."""
    planned = [r for rs in runner.plan().values() for r in rs]
    wanted = [r for r in planned if resources is None or r in resources]
    name = runner.source.name
    report = AuditReport(name)
    run_ids = {r: runner.state.start_run(name, r, "audit") for r in wanted}
    try:
        async with open_client(runner.config, runner.source, runner.env, runner.clock) as client:
            id_data_source = await resolve_data_source(client, runner.source.data_source,
                                                        create=False)
            if id_data_source is None:
                report.notes.append(
                    f"the data source {runner.source.data_source.label!r} is not at the"
                    " destination: every item is missing")
            auditor = Auditor(runner, client, id_data_source)
            for resource in wanted:
                report.resources[resource] = await auditor.resource(resource, sample)
        try:
            await _repair(runner, report)
        except (MarketingApiError, SourceError) as exc:  # found, but not sent: a gap
            report.problems.append(f"could not send the missing items again: {exc}")
    except BaseException as exc:
        for resource, run_id in run_ids.items():
            figures = report.resources.get(resource, AuditCheck()).figures()
            runner.state.finish_run(run_id, "failed", figures, error=str(exc))
        raise
    for resource, run_id in run_ids.items():
        check = report.resources[resource]
        runner.state.finish_run(run_id, "succeeded", check.figures())
    return report


async def _repair(runner: SourceRunner, report: AuditReport) -> None:
    """Map the missing and different items afresh from the source and send them."""
    keys = {r: c.repair for r, c in report.resources.items() if c.repair}
    if not keys:
        return
    streams = [s for s, rs in runner.plan().items() if set(rs) & set(keys)]
    sent = await runner.run(streams, window=all_time(runner.clock()), only=set(keys),
                            only_keys=keys)
    for stream_report in sent:
        for resource, counts in stream_report.counts.items():
            if resource in report.resources:
                report.resources[resource].resent += counts["pushed"]


async def resync(runner: SourceRunner, resources: Sequence[str] = (), *,
                 progress: Callable[[StreamReport], None] | None = None) -> list[StreamReport]:
    """Send every record again (of the streams feeding ``resources``, default all), mapped
    afresh, whatever the ledger holds; cursors stay where they are."""
    plan = runner.plan()
    known = [r for rs in plan.values() for r in rs]
    unknown = sorted(set(resources) - set(known))
    if unknown:
        raise ConfigError([f"--resource {', '.join(unknown)}: not synced for"
                           f" {runner.source.name}; its resources: {', '.join(known)}"])
    streams = [s for s, rs in plan.items() if not resources or set(rs) & set(resources)]
    return await runner.run(streams, window=all_time(runner.clock()),
                            only=set(resources) if resources else None, progress=progress)
