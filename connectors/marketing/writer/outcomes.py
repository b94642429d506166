"""What the bulk writer reports: one outcome per item (or a batch's at once), and a summary
of a whole run."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import orjson

from connectors.marketing.resources import SyncResource

Status = Literal["accepted", "rejected", "failed"]
STATUSES: tuple[Status, ...] = ("accepted", "rejected", "failed")


def item_key(resource: SyncResource, item: Any) -> Hashable:
    """An item's identity within its shop and data source, from ``resource.key_fields``.

    The value of the key field as the item carries it, not stringified (``"c-1001"`` for a
    customer, ``7`` for an address), or, when the resource has several key fields, the tuple
    of their values in ``key_fields`` order (``(101, "en")`` for a language-scoped product).
    A missing field gives ``None`` in its place: the API refuses such an item, and its
    outcome carries the item itself. So does every field of an item given encoded (an
    ``orjson.Fragment``): its caller names it by its place (``BatchOutcome.start``).
    """
    fields = resource.key_fields
    get = item.get if isinstance(item, Mapping) else (lambda _name: None)
    if len(fields) == 1:
        return get(fields[0])
    return tuple(get(name) for name in fields)


def item_keys(resource: SyncResource, items: Sequence[Any]) -> list[Hashable]:
    """``item_key`` of each of ``items``, in order: one pass over a batch, where a call per
    item costs as much as the look-ups themselves."""
    fields = resource.key_fields
    if len(fields) == 1:
        name = fields[0]
        return [item.get(name) if type(item) is dict else item_key(resource, item)
                for item in items]
    return [tuple(map(item.get, fields)) if type(item) is dict else item_key(resource, item)
            for item in items]


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What became of one item.

    ``accepted``: the API took it (it becomes readable after the visibility delay).
    ``rejected``: the API refused it, with its reasons in ``errors``; sending it again
    unchanged will not help. ``failed``: the batch never got an answer (transient errors
    after the transport's retries); sending it again later may succeed. A failed item may
    still have been applied (a connection dropped after the API took the batch): saves
    insert or update by id, so sending it again never duplicates it.

    ``item`` is the original item (as given: a mapping, or its encoded JSON) for rejected
    and failed outcomes only, so that they can be quarantined or replayed; accepted
    outcomes hold no payload, which keeps a run over millions of items small. ``batch`` numbers the batches of a run from 0 in input order;
    ``splits`` says how many times that batch was halved before this item's answer came
    (0 when the batch went through whole).
    """

    key: Hashable
    status: Status
    errors: tuple[str, ...] = ()
    item: Mapping[str, Any] | orjson.Fragment | None = field(default=None, repr=False)
    batch: int = 0
    splits: int = 0


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What became of one batch's items, taken at once: the items as sent and an
    ``ItemOutcome`` for each one not accepted; every other item was accepted. Most items of
    a run are accepted, and an object for each of them is what a consumer that takes a
    batch at a time does without.

    ``outcomes()`` gives the ``ItemOutcome`` of every item, as ``BulkWriter.write`` yields
    them (in the batch's order).
    """

    resource: SyncResource
    batch: int
    items: Sequence[Mapping[str, Any] | orjson.Fragment]
    #: index in ``items`` -> the outcome of an item that was not accepted
    refused: Mapping[int, ItemOutcome] = field(default_factory=dict)
    #: per item, how many times its part of the batch was halved; empty when it never was
    splits: tuple[int, ...] = ()
    #: the place in the writer's input of the batch's first item: ``items[i]`` was item
    #: ``start + i`` of the input (how a caller names items it gave already encoded)
    start: int = 0

    @property
    def accepted(self) -> int:
        return len(self.items) - len(self.refused)

    def keys(self) -> list[Hashable]:
        """The ``item_key`` of each item, in order."""
        return item_keys(self.resource, self.items)

    def counts(self) -> dict[Status, int]:
        """How many items took each status, in the order the statuses first appear."""
        refused = self.refused
        if not refused:
            return {"accepted": len(self.items)}
        counts: dict[Status, int] = {}
        for index in range(len(self.items)):
            status = refused[index].status if index in refused else "accepted"
            counts[status] = counts.get(status, 0) + 1
        return counts

    def outcomes(self) -> list[ItemOutcome]:
        refused, splits, number = self.refused, self.splits, self.batch
        return [
            refused[index] if index in refused
            else ItemOutcome(key, "accepted", batch=number, splits=splits[index] if splits else 0)
            for index, key in enumerate(self.keys())
        ]


class LimitChange(NamedTuple):
    """One step of the concurrency limit: when (seconds into the run), to what, and why
    (``start``, ``throttled``, ``slow`` or ``clean``)."""

    at: float
    limit: int
    reason: str


@dataclass
class WriteSummary:
    """Counts of a finished run (no payloads), with how the writer paced itself."""

    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    elapsed: float = 0.0
    batches: int = 0
    requests: int = 0
    splits: int = 0
    peak_in_flight: int = 0
    concurrency_history: list[LimitChange] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.accepted + self.rejected + self.failed

    @property
    def items_per_second(self) -> float:
        return self.total / self.elapsed if self.elapsed > 0 else 0.0

    def count(self, outcome: ItemOutcome) -> None:
        self.add(outcome.status)

    def count_batch(self, batch: BatchOutcome) -> None:
        for status, n in batch.counts().items():
            self.add(status, n)

    def add(self, status: Status, n: int = 1) -> None:
        """``n`` more items of ``status`` (no ``setattr``: it costs more than the sum)."""
        if status == "accepted":
            self.accepted += n
        elif status == "rejected":
            self.rejected += n
        elif status == "failed":
            self.failed += n
        else:
            raise ValueError(f"unknown status {status!r}")
