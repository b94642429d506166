"""The reconciliation report of a source: a Dagster asset that audits a sample of what the
ledger holds as visible (``reconciliation.audit_sample``), reads accepted items back, repairs
what did not arrive or went missing, and renders the source's state as Markdown."""

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext

from assets import concurrency
from assets.ledger_checks import source_state_results, state_check_specs
from assets.resources import StateDatabase
from assets.secrets import SourceSecrets, taking_secrets
from assets.sync import busy_failure
from connectors.marketing.errors import MarketingApiError
from connectors.sources.base import SourceError
from pipelines.engine.audit import AuditReport, audit
from pipelines.engine.completeness import StreamCompleteness
from pipelines.engine.config import Config, Source
from pipelines.engine.report import STATES, summarize
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import SourceBusy


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


def _kind(rows: list[dict[str, Any]], column: str, first: str) -> str:
    if column == first:
        return "string"
    return "int" if all(isinstance(row.get(column), int | None) for row in rows) else "float"


def _table(rows: list[dict[str, Any]], first: str) -> dg.TableMetadataValue:
    """Rows of one shape as a table the asset page shows inline: the ``first`` column as
    text, every other column whose values are numbers (or empty) as numbers."""
    columns = [first] + [c for c in (rows[0] if rows else {}) if c != first and all(
        isinstance(row.get(c), int | float | type(None)) and not isinstance(row.get(c), bool)
        for row in rows)]
    return dg.MetadataValue.table(
        records=[dg.TableRecord({c: row.get(c) for c in columns if row.get(c) is not None})
                 for row in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(c, _kind(rows, c, first))
                                       for c in columns]),
    )


def states_table(items: dict[str, dict[str, int]]) -> dg.TableMetadataValue:
    return _table([{"resource": resource, **{state: int(counts.get(state, 0))
                                             for state in STATES}}
                   for resource, counts in sorted(items.items())], "resource")


def figures_table(per_resource: dict[str, dict[str, Any]]) -> dg.TableMetadataValue:
    return _table([{"resource": resource, **figures}
                   for resource, figures in sorted(per_resource.items())], "resource")


def completeness_table(rows: list[StreamCompleteness]) -> dg.TableMetadataValue:
    return _table([{k: v for k, v in row.as_dict().items() if k != "gaps"} for row in rows],
                  "resource")


RUN_VISIBLE = "run_visible_by_deadline"
RUN_AUDIT = "run_audit_matches_destination"


def reconciliation_key(source: Source) -> dg.AssetKey:
    return dg.AssetKey([source.name, "reconciliation"])


def report_check_specs(key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    """The checks of a reconciliation report: the whole source's ledger, and what this
    reconciliation found."""
    return [
        *state_check_specs(key, whole_source=True),
        dg.AssetCheckSpec(RUN_VISIBLE, asset=key,
                          description="Run: accepted items this reconciliation found still"
                                      " not visible past their deadline (sent again)"),
        dg.AssetCheckSpec(RUN_AUDIT, asset=key,
                          description="Run: visible items this reconciliation's audit"
                                      " (a sample, `reconciliation.audit_sample`) found"
                                      " missing or different at the destination"),
    ]


def reconciliation_asset(config: Config, source: Source, synced: list[dg.AssetKey]) -> dg.AssetsDefinition:
    key = reconciliation_key(source)

    @dg.asset(
        key=key,
        group_name=source.name,
        deps=synced,
        kinds={"api"},
        pool=concurrency.destination_pool(config.destination_for(source)),  # it re-sends
        check_specs=report_check_specs(key),
        description=f"Audits a sample of what {source.name} holds as visible, reads back what it"
                    " sent, confirms it is visible, re-sends what is missing past its deadline"
                    " or at the destination, and summarises every item's state.",
    )
    @taking_secrets(source)
    def _reconcile(context: AssetExecutionContext, secrets: SourceSecrets,  # resources by key
                   state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
        yield from reconcile_step(context, config, source, key, secrets.env(config, source),
                                  state_database)

    return _reconcile


def reconcile_step(context: AssetExecutionContext, config: Config, source: Source,
                   key: dg.AssetKey, env: Mapping[str, str],
                   state_database: StateDatabase) -> Iterator[dg.MaterializeResult]:
    """One source's reconciliation, run by the engine, as its report's materialization: the
    body of the report's asset in either layout of the location."""
    sample = config.reconciliation.audit_sample
    audited = AuditReport(source.name)
    not_checked: list[str] = []
    complete: list[StreamCompleteness] = []
    complete_recent: list[StreamCompleteness] = []
    with state_database.open(config) as state:
        runner = SourceRunner(config, source, state, env,
                              lease_wait=concurrency.STEP_LEASE_WAIT,
                              on_lease_wait=context.log.info)
        try:
            if sample != 0:
                audited = asyncio.run(audit(runner,
                                            sample=None if sample == "all" else sample))
            report = asyncio.run(runner.reconcile(
                deadline_seconds=config.reconciliation.deadline_seconds,
                max_resends=config.reconciliation.max_resends,
            ))
        except SourceBusy as exc:
            raise busy_failure(exc) from None
        recent = runner.recent_window()
        try:  # the source not answering leaves what was confirmed confirmed
            complete = asyncio.run(runner.completeness())
            complete_recent = asyncio.run(runner.completeness(recent))
        except (MarketingApiError, SourceError) as exc:
            not_checked.append(f"completeness: {exc}")
        summary = summarize(state, source.name)
        held = source_state_results(summary.items, key)  # the counts just read
    not_checked = audited.not_checked() + report.not_checked() + not_checked
    for line in [*audited.notes, *audited.gaps()]:
        context.log.warning(f"audit: {line}")
    for line in not_checked:
        context.log.warning(f"not checked: {line}")
    totals = report.totals()
    found = audited.totals()
    gaps = [gap for row in [*complete, *complete_recent] for gap in row.gaps] + audited.gaps()
    window = f"changes {recent.start:%Y-%m-%d %H:%M} to {recent.end:%Y-%m-%d %H:%M} UTC"
    metadata: dict[str, Any] = {
        "gaps": dg.MetadataValue.md("\n".join(f"- {gap}" for gap in gaps)
                                    or "no gap: every record at the source is visible"),
        "not checked": dg.MetadataValue.md("\n".join(f"- {line}" for line in not_checked)
                                           or "everything was checked"),
        "items by state (ledger)": states_table(summary.items),
        "this reconciliation": figures_table(report.as_dict()),
        "completeness, all time": completeness_table(complete),
        f"completeness, {window}": completeness_table(complete_recent),
        "audit of visible items": figures_table(audited.as_dict()),
        "number of gaps": dg.MetadataValue.int(len(gaps)),
        **{name: dg.MetadataValue.int(int(totals.get(name, 0)))
           for name in ("checked", "visible", "waiting", "resent", "parked", "deleted",
                        "unchecked")},
        **{f"audit {name}": dg.MetadataValue.int(n) for name, n in found.items()},
        "events deleted (older than keep_events_days)": dg.MetadataValue.int(
            report.events_pruned),
        "report (Markdown)": dg.MetadataValue.md(
            summary.markdown() + "\n\n" + completeness_md(complete, "all time")
            + "\n\n" + completeness_md(complete_recent, window)),
    }
    for name in ("visibility_lag_p95", "visibility_lag_resolution",
                 "time_to_confirmation_p95"):
        if name in totals:
            metadata[f"{name} (s)"] = dg.MetadataValue.float(float(totals[name]))
    yield dg.MaterializeResult(
        metadata=metadata,
        check_results=[
            *held,
            dg.AssetCheckResult(
                check_name=RUN_VISIBLE, passed=int(totals.get("resent", 0)) == 0,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"re-sent": int(totals.get("resent", 0))},
                description="accepted items that were still not visible at their deadline",
            ),
            dg.AssetCheckResult(
                check_name=RUN_AUDIT,
                passed=found["missing"] + found["different"] == 0,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"audited": found["checked"], "missing": found["missing"],
                          "different": found["different"], "re-sent": found["resent"]},
                description=_audit_said(sample, found["checked"]),
            ),
        ],
    )


def _audit_said(sample: int | str, audited: int) -> str:
    """What the audit check's pass means: a pass with nothing audited says so, not "no gap"."""
    if sample == 0:
        return "not audited: the audit is off (`reconciliation.audit_sample: 0`)"
    if audited == 0:
        return ("nothing audited yet: no item was visible before this reconciliation (the"
                " next one audits what this one confirmed)")
    return (f"{audited} visible items read back; those missing or different at the"
            " destination were sent again")
