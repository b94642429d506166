"""The sync assets: one Dagster asset per (source, target resource).

A source's stream feeds one or more target resources (WooCommerce products give products,
variations and images), so each stream is one ``multi_asset`` whose specs are those
resources. Assets are partitioned by day of change time with a single-run backfill policy:
a run over a range that reaches today is the incremental sync (from the stored cursor);
a run over past days re-reads exactly that window (a backfill) and leaves the cursor alone.
"""


import asyncio
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from assets.graph import REFERS_TO
from assets.secrets import SourceSecrets, secrets_key
from pipelines.engine.config import Config, Source
from pipelines.engine.quality import rules_markdown, summarize
from pipelines.engine.report import top_reasons
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.stopped import SyncStopped, resume_text
from pipelines.engine.sync import StreamReport, Window

DEFAULT_START = date(2024, 1, 1)
#: the quality check is an ERROR (not a WARN) when one blocking rule held back more than
#: this share of the rows checked, and at least QUALITY_ERROR_MIN_ROWS rows: the rows are
#: already held back either way, but so many at once means a mapping or the shop broke
QUALITY_ERROR_SHARE = 0.02
QUALITY_ERROR_MIN_ROWS = 5


def partitions_for(source: Source) -> dg.DailyPartitionsDefinition:
    start = source.history_start or DEFAULT_START
    return dg.DailyPartitionsDefinition(start_date=start.isoformat(), end_offset=1)


def asset_key(source: Source, resource: str) -> dg.AssetKey:
    return dg.AssetKey([source.name, resource])


def window_of(context: dg.AssetExecutionContext) -> Window | None:
    """The backfill window of a run, or None for the incremental sync (a range up to today)."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    start, end = context.partition_time_window
    if end >= datetime.now(UTC) - timedelta(days=1):
        return None
    return Window(start.astimezone(UTC), end.astimezone(UTC))


def metadata_of(report: StreamReport, resource: str, state: StateStore, source: Source) -> dict[str, Any]:
    counts: Mapping[str, int] = report.counts.get(resource, {})
    ledger = state.counts(source.name, resource).get(resource, {})
    metadata: dict[str, Any] = {what: dg.MetadataValue.int(int(counts.get(what, 0)))
                                for what in ("extracted", "unchanged", "pushed", "accepted",
                                             "rejected", "quarantined", "failed")}
    metadata["records read"] = dg.MetadataValue.int(report.records)
    metadata["records/s"] = dg.MetadataValue.float(round(report.records_per_second, 1))
    metadata["cursor"] = dg.MetadataValue.text(
        f"{report.cursor.changed_at.isoformat()} #{report.cursor.record_id}"
        if report.cursor else "-"
    )
    metadata["ledger"] = dg.MetadataValue.json({k: int(v) for k, v in ledger.items()})
    states = {"pending": ItemStatus.ACCEPTED.value} | {s: s for s in (
        "visible", "rejected", "quarantined", "failed", "parked")}
    metadata["items by state"] = dg.MetadataValue.md(
        "| " + " | ".join(states) + " |\n|" + "---:|" * len(states) + "\n| "
        + " | ".join(str(int(ledger.get(v, 0))) for v in states.values()) + " |")
    reasons = top_reasons(state, source.name, resource)
    if reasons:
        metadata["top reasons held back"] = dg.MetadataValue.table(
            records=[dg.TableRecord({"reason": why, "items": n}) for why, n in reasons],
            schema=dg.TableSchema(columns=[dg.TableColumn("reason", "string"),
                                           dg.TableColumn("items", "int")]),
        )
    metadata["mode"] = dg.MetadataValue.text("dry run" if report.dry_run else "sync")
    return metadata


def checks_of(report: StreamReport, resource: str, key: dg.AssetKey,
              max_rejection_rate: float = 0.05) -> list[dg.AssetCheckResult]:
    counts: Mapping[str, int] = report.counts.get(resource, {})
    rejected, quarantined = int(counts.get("rejected", 0)), int(counts.get("quarantined", 0))
    pushed = int(counts.get("pushed", 0))
    rate = rejected / pushed if pushed else 0.0
    return [
        dg.AssetCheckResult(
            asset_key=key, check_name="no_rejections", passed=rejected == 0,
            # any rejection warns; a rate over the configured threshold is an error
            severity=dg.AssetCheckSeverity.ERROR if rate > max_rejection_rate
            else dg.AssetCheckSeverity.WARN,
            metadata={"rejected": rejected, "rejection rate": round(rate, 4),
                      "threshold": max_rejection_rate},
            description="items the API refused in this run (see `shopsync rejections`)",
        ),
        dg.AssetCheckResult(
            asset_key=key, check_name="no_quarantine", passed=quarantined == 0,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"quarantined": quarantined},
            description="items that failed validation and were held back, never sent",
        ),
    ]


def quality_check_of(report: StreamReport, resource: str,
                     key: dg.AssetKey) -> dg.AssetCheckResult:
    """The run's quality reports of ``resource`` as one asset check: passed when no row was
    held back; WARN when some were; ERROR when a blocking rule held back many."""
    summary = summarize(report.quality.get(resource, ()))
    rows, blocked = summary["rows"], summary["blocked"]
    worst = max((r["unexpected_count"] for r in summary["rules"] if r["blocking"]), default=0)
    severe = worst >= QUALITY_ERROR_MIN_ROWS and worst > QUALITY_ERROR_SHARE * rows
    warned = sum(r["unexpected_count"] for r in summary["rules"] if not r["blocking"])
    return dg.AssetCheckResult(
        asset_key=key, check_name="quality", passed=blocked == 0,
        severity=dg.AssetCheckSeverity.ERROR if severe else dg.AssetCheckSeverity.WARN,
        metadata={
            "rows checked": dg.MetadataValue.int(rows),
            "held back": dg.MetadataValue.int(blocked),
            "warnings": dg.MetadataValue.int(warned),
            "seconds": dg.MetadataValue.float(summary["seconds"]),
            "rules": dg.MetadataValue.md(rules_markdown(summary) if summary["rules"]
                                         else "no items to check in this run"),
            "results": dg.MetadataValue.json(summary["rules"]),
        },
        description="great-expectations suite on the mapped items: rows breaking a blocking"
                    " rule were quarantined (see `shopsync rejections`), the rest were sent",
    )


def stopped_failure(exc: SyncStopped) -> dg.Failure:
    """A sync stopped early (the destination down) as a failed step that says so, not a
    traceback: the same message as the command line's, and where the next run resumes."""
    return dg.Failure(
        description=exc.message,
        metadata={
            "stopped": dg.MetadataValue.text(exc.why),
            "stream": dg.MetadataValue.text(exc.stream or "-"),
            "resumes": dg.MetadataValue.text(resume_text(exc.resume) if exc.resume is not None
                                             else "the backfill's window, whole"),
        },
    )


def stream_asset(config: Config, source: Source, stream: str, resources: list[str],
                 produced: set[str]) -> dg.AssetsDefinition:
    """The multi-asset of one stream of one source."""
    partitions = partitions_for(source)
    specs = []
    check_specs = []
    for resource in resources:
        key = asset_key(source, resource)
        upstream = [asset_key(source, r) for r in REFERS_TO.get(resource, ())
                    if r in produced and r not in resources]
        specs.append(dg.AssetSpec(
            key, group_name=source.name, deps=upstream, partitions_def=partitions,
            kinds={source.platform, "api"},
            description=f"{resource} of {source.name} ({source.platform}, stream `{stream}`)"
                        " pushed to the Marketing API",
        ))
        check_specs += [dg.AssetCheckSpec("no_rejections", asset=key),
                        dg.AssetCheckSpec("no_quarantine", asset=key),
                        dg.AssetCheckSpec("quality", asset=key,
                                          description="great-expectations suite of the"
                                                      f" {resource} items, before sending")]

    @dg.multi_asset(
        name=f"{source.name}__{stream}",
        specs=specs,
        check_specs=check_specs,
        required_resource_keys={secrets_key(source)},
        backfill_policy=dg.BackfillPolicy.single_run(),
        can_subset=False,
        pool=f"shopsync_{source.name}",
    )
    def _sync(context: AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
        secrets: SourceSecrets = getattr(context.resources, secrets_key(source))
        state = StateStore(config.state_url or StateStore.default_url())
        try:
            runner = SourceRunner(config, source, state, secrets.env(config, source))
            window = window_of(context)
            context.log.info("syncing %s/%s %s", source.name, stream,
                             f"window {window.start:%Y-%m-%d}..{window.end:%Y-%m-%d}"
                             if window else "incrementally")
            try:
                (report,) = asyncio.run(runner.run([stream], window=window))
            except SyncStopped as exc:
                raise stopped_failure(exc) from None
            for resource in resources:
                key = asset_key(source, resource)
                yield dg.MaterializeResult(
                    asset_key=key,
                    metadata=metadata_of(report, resource, state, source),
                    check_results=[*checks_of(report, resource, key,
                                             config.alerts.max_rejection_rate),
                                   quality_check_of(report, resource, key)],
                )
        finally:
            state.close()

    return _sync
