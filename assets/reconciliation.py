"""The reconciliation report of a source: a Dagster asset that audits a sample of what the
ledger holds as visible (``reconciliation.audit_sample``), reads accepted items back, repairs
what did not arrive or went missing, and renders the source's state as Markdown."""

import asyncio
from collections.abc import Iterator
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from assets.secrets import SourceSecrets, secrets_key
from connectors.marketing.errors import MarketingApiError
from connectors.sources.base import SourceError
from pipelines.engine.audit import AuditReport, audit
from pipelines.engine.completeness import StreamCompleteness
from pipelines.engine.config import Config, Source
from pipelines.engine.report import summarize
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore


def completeness_md(rows: list[StreamCompleteness], scope: str) -> str:
    lines = [(f"**Completeness, {scope}** (records at the source → extracted → items final →"
              " visible)"), "",
             "| stream | at source | extracted | final | visible |", "|---|---:|---:|---:|---:|"]
    for row in rows:
        at_source = "-" if row.at_source is None else str(row.at_source)
        lines.append(f"| {row.stream} | {at_source} | {row.extracted} | {row.final} |"
                     f" {row.visible} |")
    gaps = [gap for row in rows for gap in row.gaps]
    lines += ["", *(f"- {gap}" for gap in gaps)] if gaps else ["", "no gap"]
    return "\n".join(lines)


def reconciliation_key(source: Source) -> dg.AssetKey:
    return dg.AssetKey([source.name, "reconciliation"])


def reconciliation_asset(config: Config, source: Source, synced: list[dg.AssetKey]) -> dg.AssetsDefinition:
    key = reconciliation_key(source)

    @dg.asset(
        key=key,
        group_name=source.name,
        deps=synced,
        kinds={"api"},
        required_resource_keys={secrets_key(source)},
        check_specs=[dg.AssetCheckSpec("nothing_parked", asset=key),
                     dg.AssetCheckSpec("visible_in_time", asset=key),
                     dg.AssetCheckSpec("destination_matches_ledger", asset=key)],
        description=f"Audits a sample of what {source.name} holds as visible, reads back what it"
                    " sent, confirms it is visible, re-sends what is missing past its deadline"
                    " or at the destination, and summarises every item's state.",
    )
    def _reconcile(context: AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
        secrets: SourceSecrets = getattr(context.resources, secrets_key(source))
        state = StateStore(config.state_url or StateStore.default_url())
        sample = config.reconciliation.audit_sample
        audited = AuditReport(source.name)
        not_checked: list[str] = []
        complete: list[StreamCompleteness] = []
        complete_recent: list[StreamCompleteness] = []
        try:
            runner = SourceRunner(config, source, state, secrets.env(config, source))
            if sample != 0:
                audited = asyncio.run(audit(runner, sample=None if sample == "all" else sample))
            report = asyncio.run(runner.reconcile(
                deadline_seconds=config.reconciliation.deadline_seconds,
                max_resends=config.reconciliation.max_resends,
            ))
            recent = runner.recent_window()
            try:  # the source not answering leaves what was confirmed confirmed
                complete = asyncio.run(runner.completeness())
                complete_recent = asyncio.run(runner.completeness(recent))
            except (MarketingApiError, SourceError) as exc:
                not_checked.append(f"completeness: {exc}")
            summary = summarize(state, source.name)
        finally:
            state.close()
        not_checked = audited.not_checked() + report.not_checked() + not_checked
        for line in [*audited.notes, *audited.gaps()]:
            context.log.warning(f"audit: {line}")
        for line in not_checked:
            context.log.warning(f"not checked: {line}")
        totals = report.totals()
        found = audited.totals()
        parked = sum(c.get("parked", 0) for c in summary.items.values())
        gaps = [gap for row in [*complete, *complete_recent] for gap in row.gaps] + audited.gaps()
        metadata: dict[str, Any] = {
            "report": dg.MetadataValue.md(
                summary.markdown() + "\n\n" + completeness_md(complete, "all time")
                + "\n\n" + completeness_md(
                    complete_recent,
                    f"changes {recent.start:%Y-%m-%d %H:%M} to {recent.end:%Y-%m-%d %H:%M} UTC")),
            "completeness": dg.MetadataValue.json([row.as_dict() for row in complete]),
            "completeness (recent window)": dg.MetadataValue.json(
                [row.as_dict() for row in complete_recent]),
            "gaps": dg.MetadataValue.int(len(gaps)),
            "per resource": dg.MetadataValue.json(report.as_dict()),
            **{name: dg.MetadataValue.int(int(totals.get(name, 0)))
               for name in ("checked", "visible", "waiting", "resent", "parked", "deleted",
                            "unchecked")},
            "audit": dg.MetadataValue.json(audited.as_dict()),
            **{f"audit {name}": dg.MetadataValue.int(n) for name, n in found.items()},
            "not checked": dg.MetadataValue.md("\n".join(f"- {line}" for line in not_checked)
                                               or "everything was checked"),
        }
        for name in ("lag_p50", "lag_p95", "lag_max"):
            if name in totals:
                metadata[f"{name} (s)"] = dg.MetadataValue.float(float(totals[name]))
        yield dg.MaterializeResult(
            metadata=metadata,
            check_results=[
                dg.AssetCheckResult(
                    check_name="nothing_parked", passed=parked == 0,
                    severity=dg.AssetCheckSeverity.WARN, metadata={"parked": parked},
                    description="items given up on after their re-sends or rejections:"
                                " see `shopsync rejections`",
                ),
                dg.AssetCheckResult(
                    check_name="visible_in_time", passed=int(totals.get("resent", 0)) == 0,
                    severity=dg.AssetCheckSeverity.WARN,
                    metadata={"re-sent": int(totals.get("resent", 0))},
                    description="accepted items that were still not visible at their deadline",
                ),
                dg.AssetCheckResult(
                    check_name="destination_matches_ledger",
                    passed=found["missing"] + found["different"] == 0,
                    severity=dg.AssetCheckSeverity.WARN,
                    metadata={"audited": found["checked"], "missing": found["missing"],
                              "different": found["different"], "re-sent": found["resent"]},
                    description="visible items the audit found missing or different at the"
                                " destination (sent again)",
                ),
            ],
        )

    return _reconcile
