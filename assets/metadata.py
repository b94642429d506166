"""What a sync asset's materialization says: what this run did, and what the ledger holds.

The two are kept apart in the names — ``run: …`` for this run's counts, ``ledger: …`` for
every item's state after it — so that a backfill of last March or a run that sent nothing
cannot be read as the state of the destination. Numbers are plain numeric metadata, which
Dagster plots across materializations from the first one; the state is also one table.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import dagster as dg

from assets.window import describe
from connectors.sources.base import Position
from pipelines.engine.config import Source
from pipelines.engine.plan import KeyCheckpoint, Window, resume_of, stands_at
from pipelines.engine.report import top_reasons
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.stream_report import StreamReport

#: this run's counts, in the order an item meets them
RUN_COUNTS = ("extracted", "unchanged", "pushed", "accepted", "rejected", "quarantined",
              "failed")
#: the ledger's states, with what each means to a person reading the asset
LEDGER_STATES: dict[ItemStatus, str] = {
    ItemStatus.VISIBLE: "read back from the API: done",
    ItemStatus.ACCEPTED: "accepted by the API, not yet read back",
    ItemStatus.FAILED: "not delivered after retries: sent again next run",
    ItemStatus.REJECTED: "refused by the API: retried after a fix, then parked",
    ItemStatus.QUARANTINED: "held back before sending (invalid): never sent",
    ItemStatus.PARKED: "given up on: `shopsync rejections retry` sends it again",
    ItemStatus.DELETED: "deleted at the source, and at the destination",
}


def position_text(position: Position | KeyCheckpoint | None) -> str:
    if position is None:
        return "none yet (the next run reads from the beginning)"
    if isinstance(position, KeyCheckpoint):
        return f"none yet: the {stands_at(position)}"
    return stands_at(position)


def ledger_table(counts: Mapping[str, int]) -> dg.TableMetadataValue:
    return dg.MetadataValue.table(
        records=[dg.TableRecord({"state": status.value, "items": int(counts.get(status, 0)),
                                 "meaning": meaning})
                 for status, meaning in LEDGER_STATES.items()],
        schema=dg.TableSchema(columns=[dg.TableColumn("state", "string"),
                                       dg.TableColumn("items", "int"),
                                       dg.TableColumn("meaning", "string")]),
    )


def reasons_table(reasons: list[tuple[str, int]]) -> dg.TableMetadataValue:
    return dg.MetadataValue.table(
        records=[dg.TableRecord({"reason": why, "items": n}) for why, n in reasons],
        schema=dg.TableSchema(columns=[dg.TableColumn("reason", "string"),
                                       dg.TableColumn("items", "int")]),
    )


def metadata_of(report: StreamReport, resource: str, state: StateStore, source: Source,
                window: Window | None) -> dict[str, Any]:
    """The materialization's metadata of ``resource`` after ``report``'s run."""
    counts: Mapping[str, int] = report.counts.get(resource, {})
    ledger = state.counts(source.name, resource).get(resource, {})
    metadata: dict[str, Any] = {
        "this run": dg.MetadataValue.text(
            ("dry run (nothing written): " if report.dry_run else "") + describe(window)),
    }
    metadata |= {f"run: {what}": dg.MetadataValue.int(int(counts.get(what, 0)))
                 for what in RUN_COUNTS}
    metadata["run: records read"] = dg.MetadataValue.int(report.records)
    metadata["run: records/s"] = dg.MetadataValue.float(round(report.records_per_second, 1))
    metadata["cursor (stored)"] = dg.MetadataValue.text(
        position_text(resume_of(partial(state.get_cursor, source.name), report.stream)))
    if window is not None:
        metadata["cursor (backfill reached)"] = dg.MetadataValue.text(
            position_text(report.cursor) if report.cursor else "no record in the window")
    metadata["items by state (ledger)"] = ledger_table(ledger)
    metadata |= {f"ledger: {status.value}": dg.MetadataValue.int(int(ledger.get(status, 0)))
                 for status in LEDGER_STATES}
    reasons = top_reasons(state, source.name, resource)
    if reasons:
        metadata["top reasons held back (ledger)"] = reasons_table(reasons)
    return metadata
