"""The sync assets: one Dagster asset per (source, target resource).

A source's stream feeds one or more target resources (WooCommerce products give products,
variations and images), so each stream is one ``multi_asset`` named after what it
materializes. The assets are not partitioned (the README says why): a run of the source's
sync job is the incremental sync from the stored cursors, or — given a window in the
``sync_window`` resource — a backfill of that window, which leaves the cursors alone.

Each asset has checks about the run (``run_rejections``, ``run_quality``) and, evaluated as
its step ends, checks about what the ledger still holds back (``assets.ledger_checks``).
"""


import asyncio
from collections.abc import Iterator, Mapping

import dagster as dg
from dagster import AssetExecutionContext

from assets import concurrency
from assets.graph import REFERS_TO
from assets.ledger_checks import state_check_results, state_check_specs
from assets.metadata import metadata_of
from assets.resources import StateDatabase
from assets.secrets import SourceSecrets, taking_secrets
from assets.window import SyncWindow, describe
from pipelines.engine.config import Config, Source
from pipelines.engine.quality import rules_markdown, summarize
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import SourceBusy
from pipelines.engine.stopped import SyncStopped, resume_text
from pipelines.engine.stream_report import StreamReport

#: the quality check is an ERROR (not a WARN) when one blocking rule held back more than
#: this share of the rows checked, and at least QUALITY_ERROR_MIN_ROWS rows: the rows are
#: already held back either way, but so many at once means a mapping or the shop broke
QUALITY_ERROR_SHARE = 0.02
QUALITY_ERROR_MIN_ROWS = 5


def asset_key(source: Source, resource: str) -> dg.AssetKey:
    return dg.AssetKey([source.name, resource])


def step_name(source: Source, resources: list[str]) -> str:
    """The op of a stream, named after what it materializes (not the shop's stream name)."""
    return f"{source.name}__{'_'.join(resources)}"


RUN_REJECTIONS = "run_rejections"
RUN_QUALITY = "run_quality"


def rejections_check_of(report: StreamReport, resource: str, key: dg.AssetKey,
                        max_rejection_rate: float = 0.05) -> dg.AssetCheckResult:
    """This run's rejections: any warns; a share over the configured threshold is an error."""
    counts: Mapping[str, int] = report.counts.get(resource, {})
    rejected, pushed = int(counts.get("rejected", 0)), int(counts.get("pushed", 0))
    rate = rejected / pushed if pushed else 0.0
    return dg.AssetCheckResult(
        asset_key=key, check_name=RUN_REJECTIONS, passed=rejected == 0,
        severity=dg.AssetCheckSeverity.ERROR if rate > max_rejection_rate
        else dg.AssetCheckSeverity.WARN,
        metadata={"rejected in this run": rejected, "pushed in this run": pushed,
                  "rejection rate": round(rate, 4), "threshold": max_rejection_rate},
        description=f"{rejected} of {pushed} items sent in this run were refused by the API"
                    if rejected else f"the API took all {pushed} items sent in this run",
    )


def quality_check_of(report: StreamReport, resource: str,
                     key: dg.AssetKey) -> dg.AssetCheckResult:
    """This run's rows of ``resource`` as one check: every row the run judged, and every row
    it held back — by a great-expectations rule, the item models, the mapping or the limits —
    under its rule. Passed when none was held back; WARN when some were; ERROR when one
    blocking rule held back many."""
    summary = summarize(report.quality.get(resource, ()))
    rows, blocked = summary["rows"], summary["blocked"]
    worst = max((r["unexpected_count"] for r in summary["rules"] if r["blocking"]), default=0)
    severe = worst >= QUALITY_ERROR_MIN_ROWS and worst > QUALITY_ERROR_SHARE * rows
    warned = sum(r["unexpected_count"] for r in summary["rules"] if not r["blocking"])
    failing = [r for r in summary["rules"] if r["unexpected_count"] or r.get("error")]
    return dg.AssetCheckResult(
        asset_key=key, check_name=RUN_QUALITY, passed=blocked == 0,
        severity=dg.AssetCheckSeverity.ERROR if severe else dg.AssetCheckSeverity.WARN,
        metadata={
            "rows in this run": dg.MetadataValue.int(rows),
            "held back in this run": dg.MetadataValue.int(blocked),
            "warnings": dg.MetadataValue.int(warned),
            "seconds": dg.MetadataValue.float(round(summary["seconds"], 3)),
            "rules broken": dg.MetadataValue.md(
                rules_markdown({**summary, "rules": failing}) if failing
                else "no row broke a rule in this run"),
        },
        description=(f"{blocked} of {rows} rows held back in this run" if blocked
                     else f"all {rows} rows of this run passed") + (
                     f", {warned} warnings" if warned else ""),
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


def busy_failure(exc: SourceBusy) -> dg.Failure:
    """Another run of the source holds it (the command line's, say): a failed step with the
    engine's message — which run holds it, since when, what to do — not a traceback."""
    return dg.Failure(description=exc.message,
                      metadata={"held by": dg.MetadataValue.text(exc.holder or "-")})


def stream_check_specs(key: dg.AssetKey, resource: str) -> list[dg.AssetCheckSpec]:
    """The checks of a stream's asset: the ledger's state, and the run's rejections and
    quality."""
    return [
        *state_check_specs(key),
        dg.AssetCheckSpec(RUN_REJECTIONS, asset=key,
                          description=f"Run: {resource} items the API refused in this"
                                      " run (an error over `alerts.max_rejection_rate`)"),
        dg.AssetCheckSpec(RUN_QUALITY, asset=key,
                          description=f"Run: the {resource} rows this run judged and the"
                                      " ones it held back, by rule (great-expectations"
                                      " suite, item models, mapping, limits)"),
    ]


def stream_asset(config: Config, source: Source, stream: str, resources: list[str],
                 produced: set[str]) -> dg.AssetsDefinition:
    """The multi-asset of one stream of one source."""
    specs = []
    check_specs = []
    for resource in resources:
        key = asset_key(source, resource)
        upstream = [asset_key(source, r) for r in REFERS_TO.get(resource, ())
                    if r in produced and r != resource]
        specs.append(dg.AssetSpec(
            key, group_name=source.name, deps=upstream, kinds={source.platform, "api"},
            description=f"The {resource} of {source.name} ({source.platform}, read from its"
                        f" `{stream}` stream), mapped, validated and pushed to the Marketing"
                        " API. The metadata says what the last run did (`run: …`) and what"
                        " the ledger holds for every item (`ledger: …`).",
        ))
        check_specs += stream_check_specs(key, resource)

    @dg.multi_asset(
        name=step_name(source, resources),
        specs=specs,
        check_specs=check_specs,
        can_subset=False,
        pool=concurrency.destination_pool(config.destination_for(source)),
    )
    @taking_secrets(source)
    def _sync(context: AssetExecutionContext, secrets: SourceSecrets,  # resources by key
              sync_window: SyncWindow, state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
        keys = {resource: asset_key(source, resource) for resource in resources}
        yield from sync_step(context, config, source, stream, keys, secrets.env(config, source),
                             sync_window, state_database)

    return _sync


def sync_step(context: AssetExecutionContext, config: Config, source: Source, stream: str,
              keys: Mapping[str, dg.AssetKey], env: Mapping[str, str], sync_window: SyncWindow,
              state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
    """One stream of one source, run by the engine: a materialization per resource it feeds
    (``keys``), each with the run's checks and the ledger's. The body of a stream's asset in
    either layout of the location (a group per shop, or shops as partitions)."""
    window = sync_window.window()
    with state_database.open(config) as state:
        runner = SourceRunner(config, source, state, env,
                              lease_wait=concurrency.STEP_LEASE_WAIT,
                              on_lease_wait=context.log.info)
        context.log.info(f"{source.name}/{stream}: {describe(window)}")
        try:
            (report,) = asyncio.run(runner.run([stream], window=window))
        except SyncStopped as exc:
            raise stopped_failure(exc) from None
        except SourceBusy as exc:
            raise busy_failure(exc) from None
        held = state_check_results(state, source.name, keys)
        for resource, key in keys.items():
            yield dg.MaterializeResult(
                asset_key=key,
                metadata=metadata_of(report, resource, state, source, window),
                check_results=[*held[resource],
                               rejections_check_of(report, resource, key,
                                                   config.alerts.max_rejection_rate),
                               quality_check_of(report, resource, key)],
            )
