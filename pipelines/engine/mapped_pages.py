"""A stream's pages as the sync takes them: each record with its position and the items it
maps to, mapped where the page was read — in the run's own process (``mapped_pages``) or
in a process of its own beside it (``read_process.py``, which also prechecks each item:
``pack``), the same mapper either way.

A record the mapping (or an override) cannot map is one item held back, with its origin and
the reason: the rest of the stream flows on.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from connectors.sources.base import Position, RawRecord
from pipelines.engine.config import Source
from pipelines.engine.gate import PrecheckedItem, judge_items, precheck
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
from pipelines.engine.quality import Held, check
from pipelines.engine.quality import held as holds
from pipelines.engine.quality.check import Judged
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


#: one item as it travels: (resource, key, item, content hash or None when not prechecked,
#: hold, the quality suite's verdict or None when the run is to check it)
PackedItem = tuple[str, str, Item, str | None, Held | None, Judged | None]
#: a page of ``Mapped`` as plain tuples — (change time, record id, items or None): pickled
#: and unpickled in a quarter of the objects' time (8.5 against 35 µs an order)
Packed = list[tuple[datetime, str, list[PackedItem] | None]]


def pack(page: list[Mapped]) -> Packed:
    """``page`` for the run, each item prechecked here (``gate.precheck``): its hash and its
    item model's verdict cost the run nothing then. Every item of a record carries the
    record's id and change time (``RecordMapper.record``), so they travel once, with the
    position."""
    return [(m.position.changed_at, m.position.record_id, None if m.items is None else [
        (i.resource, i.key, i.item, *(precheck(i) or (None, None)), None) for i in m.items])
        for m in page]


def unpack(packed: Packed) -> list[Mapped]:
    """The page ``pack`` (or ``JudgedPages``) was given, its items prechecked."""
    return [Mapped(Position(changed_at, record_id), None if items is None else [
        MappedItem(resource, key, item, record_id, changed_at) if content_hash is None
        else PrecheckedItem(resource, key, item, record_id, changed_at, content_hash, hold,
                            judged)
        for resource, key, item, content_hash, hold, judged in items])
        for changed_at, record_id, items in packed]


class JudgedPages:
    """Pages packed (``pack``) with the quality suite's verdict on each item that may go on
    (``gate.judge_items``): the suite costs per batch more than per item, so a read process
    judges about a chunk's items at once, holding its pages until it has read that many
    (``add``) or the stream ends (``flush``).

    The suites are planned in a thread from when the first pages are sent (``prepare``);
    until then pages travel unjudged, and the run checks their items itself."""

    def __init__(self, items: int, resources: Collection[str]) -> None:
        self.items = items
        self.resources = resources
        self._pages: list[Packed] = []
        self._held = 0
        self._prepared = False

    def add(self, page: list[Mapped]) -> list[Packed]:
        """The pages to send now: none until about a chunk's items are held (each as it
        comes when there is nothing to judge)."""
        if not self.resources:
            return [pack(page)]
        self._pages.append(pack(page))
        self._held += sum(len(items) for _, _, items in self._pages[-1] if items)
        return self.flush() if self._held >= self.items else []

    def flush(self) -> list[Packed]:
        """The pages held, judged as one batch per resource."""
        pages, self._pages, self._held = self._pages, [], 0
        batches: dict[str, _Batch] = {}
        for page in pages:
            for _, _, items in page:
                if items:
                    for index, packed in enumerate(items):
                        if packed[3] is not None and packed[4] is None:  # hashed, not held
                            batch = batches.get(packed[0])
                            if batch is None:
                                batch = batches[packed[0]] = _Batch()
                            batch.add(items, index)
        for resource, batch in batches.items():
            batch.judged(judge_items(resource, batch.items))
        return pages

    def prepare(self) -> None:
        """Start planning the suites (once): called after the first pages are sent, so that
        the import overlaps the run's work on them."""
        if not self._prepared:
            self._prepared = True
            check.prepare(self.resources)


class _Batch:
    """The items of one resource a window judges, each once however often it was read
    alike (same key and content), and where each of their copies stands in its page."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self._rows: dict[tuple[str, str | None], int] = {}
        #: per row: (its record's items, index) of each copy
        self._places: list[list[tuple[list[PackedItem], int]]] = []

    def add(self, items: list[PackedItem], index: int) -> None:
        _, key, item, content_hash, _, _ = items[index]
        row = self._rows.setdefault((key, content_hash), len(self.items))
        if row == len(self.items):
            self.items.append(item)
            self._places.append([(items, index)])
        else:
            self._places[row].append((items, index))

    def judged(self, verdicts: list[Judged | Held] | None) -> None:
        """Each copy with its row's verdict (None: not planned yet, the run checks them);
        one the suite could not run on, held back instead."""
        if verdicts is None:
            return
        for places, verdict in zip(self._places, verdicts, strict=True):
            for items, index in places:
                packed = items[index]
                items[index] = ((*packed[:4], None, verdict) if isinstance(verdict, Judged)
                                else (*packed[:4], verdict, None))


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
