"""The reconciliation report of a source: a Dagster asset that reads accepted items back,
repairs what did not arrive, and renders the source's state as Markdown."""

import asyncio
from collections.abc import Iterator
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from assets.secrets import SourceSecrets, secrets_key
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
                     dg.AssetCheckSpec("visible_in_time", asset=key)],
        description=f"Reads back what {source.name} sent, confirms it is visible, re-sends what"
                    " is missing past its deadline, and summarises every item's state.",
    )
    def _reconcile(context: AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
        secrets: SourceSecrets = getattr(context.resources, secrets_key(source))
        state = StateStore(config.state_url or StateStore.default_url())
        try:
            runner = SourceRunner(config, source, state, secrets.env(config, source))
            report = asyncio.run(runner.reconcile(
                deadline_seconds=config.reconciliation.deadline_seconds,
                max_resends=config.reconciliation.max_resends,
            ))
            complete = asyncio.run(runner.completeness())
            recent = runner.recent_window()
            complete_recent = asyncio.run(runner.completeness(recent))
            summary = summarize(state, source.name)
        finally:
            state.close()
        totals = report.totals()
        parked = sum(c.get("parked", 0) for c in summary.items.values())
        gaps = [gap for row in [*complete, *complete_recent] for gap in row.gaps]
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
               for name in ("checked", "visible", "waiting", "resent", "parked", "deleted")},
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
            ],
        )

    return _reconcile
