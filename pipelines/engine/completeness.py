"""Completeness of a source: does every record the source holds end up visible?

Per stream, four counts side by side — records the source reports, records extracted
(distinct source records in the ledger), items in a final state, items visible — and every
gap between them named in words, never averaged away. Over all time (records at the source
where the connector can list its ids) or for a window of change time (what the source
returns for that window now).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from connectors.sources.base import Position, SourceConnector
from pipelines.engine.deletions import present_ids
from pipelines.engine.state import ItemStatus, StateStore

FINAL = (ItemStatus.VISIBLE, ItemStatus.QUARANTINED, ItemStatus.PARKED, ItemStatus.REJECTED)


@dataclass
class StreamCompleteness:
    stream: str
    resource: str
    at_source: int | None
    extracted: int
    final: int
    visible: int
    gaps: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"resource": self.resource, "at_source": self.at_source,
                "extracted": self.extracted, "final": self.final, "visible": self.visible,
                "gaps": self.gaps}


def main_resource(stream: str, resources: list[str]) -> str:
    """The resource a stream is about (orders for the orders stream, not its carriers)."""
    return stream if stream in resources else resources[0]


def _row(stream: str, resource: str, at_source: int | None, extracted: int,
         counts: dict[str, int]) -> StreamCompleteness:
    final = sum(counts.get(s.value, 0) for s in FINAL)
    items = sum(n for s, n in counts.items() if s != ItemStatus.DELETED.value)
    row = StreamCompleteness(stream, resource, at_source, extracted, final,
                             counts.get(ItemStatus.VISIBLE.value, 0))
    if row.at_source is not None and row.at_source > row.extracted:
        row.gaps.append(f"{row.at_source - row.extracted} {stream} records at the source"
                        " were never extracted (a sync is due, or they are out of window)")
    if items > final:
        row.gaps.append(f"{items - final} {resource} items are not in a final state yet"
                        " (accepted but not seen, or failed)")
    held = final - row.visible
    if held:
        row.gaps.append(f"{held} {resource} items were held back (quarantined, rejected or"
                        " parked): see `shopsync rejections`")
    return row


async def completeness(state: StateStore, source: str, connector: SourceConnector,
                       plan: dict[str, list[str]]) -> list[StreamCompleteness]:
    """Over all time; records at the source where the connector can list its ids."""
    out = []
    for stream, resources in plan.items():
        resource = main_resource(stream, resources)
        ids = await present_ids(connector, stream)
        counts = state.counts(source, resource).get(resource, {})
        out.append(_row(stream, resource, None if ids is None else len(ids),
                        state.record_count(source, resource), counts))
    return out


async def completeness_in_window(
    state: StateStore, source: str, connector: SourceConnector, plan: dict[str, list[str]],
    start: datetime, end: datetime,
) -> list[StreamCompleteness]:
    """For records whose change time is in ``[start, end)``: what the source returns for that
    window now, against what the ledger holds for it."""
    out = []
    for stream, resources in plan.items():
        resource = main_resource(stream, resources)
        at_source = 0
        async for page in connector.read(stream, after=Position(start - timedelta(microseconds=1)),
                                         until=end):
            at_source += sum(1 for r in page
                             if start <= connector.position(stream, r).changed_at < end)
        records, counts = state.window_counts(source, resource, start, end)
        out.append(_row(stream, resource, at_source, records, counts))
    return out
