"""A stream's pages as the sync takes them: each record with its position and the items it
maps to, mapped where the page was read — in the run's own process (``mapped_pages``) or
in a process of its own beside it (``read_process.py``, which also prechecks each item:
``pack``), the same mapper either way.

A record the mapping (or an override) cannot map is one item held back, with its origin and
the reason: the rest of the stream flows on.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime

from connectors.sources.base import Position, RawRecord
from pipelines.engine.config import Source
from pipelines.engine.gate import EncodedItem, PrecheckedItem, encoded, precheck
from pipelines.engine.limits import ledger_safe
from pipelines.engine.mappings.base import (
    Item,
    MappedItem,
    MappingContext,
    Overrides,
    PlatformMapping,
    map_record,
)
from pipelines.engine.plan import ReadPlan
from pipelines.engine.quality import Held
from pipelines.engine.quality import held as holds
from pipelines.engine.quality.frame import Row
from pipelines.engine.reasons import why
from pipelines.engine.stages import StageTimer, stage


@dataclass(frozen=True, slots=True)
class Mapped:
    """One record read: where it stands, and its items (None: read, but outside the run's
    plan — it still counts as seen by a full read)."""

    position: Position
    items: list[MappedItem] | None


def mapping_context(source: Source, id_data_source: int | None) -> MappingContext:
    # sources read from a database or files have no shop address
    return MappingContext(shop_url=source.connection.url or "", lang=source.lang,
                          currency=source.currency, id_data_source=id_data_source)


class RecordMapper:
    """Maps a source's records: its platform mapping, its overrides and its context."""

    def __init__(self, mapping: PlatformMapping, overrides: Overrides,
                 context: MappingContext) -> None:
        self.mapping = mapping
        self.overrides = overrides
        self.context = context

    def page(self, stream: str, plan: ReadPlan, records: list[RawRecord],
             position_of: Callable[[str, RawRecord], Position]) -> list[Mapped]:
        """A page's records, each at its position, mapped when the plan keeps it."""
        mapped = []
        for record in records:
            position = position_of(stream, record)
            items = (self.record(stream, record, position)
                     if plan.keeps(position.changed_at) else None)
            mapped.append(Mapped(position, items))
        return mapped

    def record(self, stream: str, record: RawRecord, position: Position) -> list[MappedItem]:
        """The items of one record; one that cannot be mapped is one item held back in its
        stream's first resource, keyed by the record's id as the source gave it."""
        try:
            return list(map_record(self.mapping, self.overrides, stream, record, self.context,
                                   position.record_id, position.changed_at))
        except Exception as exc:  # noqa: BLE001 - whatever one record does, it is its own
            origin = record.get("_origin") if isinstance(record.get("_origin"), str) else None
            where = origin or f"{stream} record {position.record_id!r}"
            # held back as what the record is (an order, not the carriers its lines name)
            produced = self.mapping.produces.get(stream, ())
            resource = stream if stream in produced else next(iter(produced), stream)
            reason = f"{where}{holds.CANNOT_MAP}{why(exc)}"
            item = {"_errors": [reason], "_record": ledger_safe(record)}
            return [MappedItem(resource, position.record_id or where, item,
                               position.record_id, position.changed_at)]


#: a page of ``Mapped`` as plain tuples — (change time, record id, items as (resource, key,
#: item, content hash or None when not prechecked, hold, suite row) or None). An item not
#: held back travels as its JSON (``gate.EncodedItem``), sent and recorded as it came:
#: unpickled, a bytes object costs the run half of what a dict and everything in it did
#: (1.0-1.5 against 1.9-2.9 µs an order, the allocator's work after it aside), and at a
#: million SQL orders the syncing thread spent 0.82x the CPU (``bench/sync.py``). Plain
#: tuples pickle in a quarter of the objects' time
Packed = list[tuple[datetime, str, list[tuple[str, str, Item | bytes, str | None,
                                              Held | None, Row | None]] | None]]


def pack(page: list[Mapped]) -> Packed:
    """``page`` for the run, each item prechecked here (``gate.precheck``): its hash, its
    item model's verdict and its JSON cost the run nothing then. Every item of a record
    carries the record's id and change time (``RecordMapper.record``), so they travel
    once, with the position."""
    return [(m.position.changed_at, m.position.record_id,
             None if m.items is None else [_packed(i) for i in m.items]) for m in page]


def _packed(mapped: MappedItem) -> tuple[str, str, Item | bytes, str | None, Held | None,
                                          Row | None]:
    found = precheck(mapped)
    if found is None:
        return mapped.resource, mapped.key, mapped.item, None, None, None
    content_hash, hold, row = found
    body = encoded(mapped, hold)
    return (mapped.resource, mapped.key, mapped.item if body is None else body, content_hash,
            hold, row)


def unpack(packed: Packed) -> list[Mapped]:
    """The page ``pack`` was given, its items prechecked."""
    return [Mapped(Position(changed_at, record_id), None if items is None else [
        _unpacked(*item, record_id, changed_at) for item in items])
        for changed_at, record_id, items in packed]


def _unpacked(resource: str, key: str, item: Item | bytes, content_hash: str | None,
              hold: Held | None, row: Row | None, record_id: str, changed_at: datetime
              ) -> MappedItem:
    if isinstance(item, bytes):
        assert content_hash is not None
        return EncodedItem(resource, key, item, record_id, changed_at, content_hash, row)
    if content_hash is None:
        return MappedItem(resource, key, item, record_id, changed_at)
    return PrecheckedItem(resource, key, item, record_id, changed_at, content_hash, hold, row)


async def mapped_pages(pages: AsyncIterator[list[RawRecord]], mapper: RecordMapper,
                       stream: str, plan: ReadPlan,
                       position_of: Callable[[str, RawRecord], Position],
                       stages: StageTimer | None = None
                       ) -> AsyncGenerator[list[Mapped], None]:
    """``pages`` mapped in this process, each as it is read."""
    try:
        async for records in pages:
            with stage(stages, "map"):
                mapped = mapper.page(stream, plan, records, position_of)
            yield mapped
    finally:
        aclose = getattr(pages, "aclose", None)
        if aclose is not None:
            await aclose()
