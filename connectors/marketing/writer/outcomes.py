"""What the bulk writer reports: one outcome per item, and a summary of a whole run."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from connectors.marketing.resources import SyncResource

Status = Literal["accepted", "rejected", "failed"]
STATUSES: tuple[Status, ...] = ("accepted", "rejected", "failed")


def item_key(resource: SyncResource, item: Any) -> Hashable:
    """An item's identity within its shop and data source, from ``resource.key_fields``.

    The value of the key field as the item carries it, not stringified (``"c-1001"`` for a
    customer, ``7`` for an address), or, when the resource has several key fields, the tuple
    of their values in ``key_fields`` order (``(101, "en")`` for a language-scoped product).
    A missing field gives ``None`` in its place: the API refuses such an item, and its
    outcome carries the item itself.
    """
    fields = resource.key_fields
    get = item.get if isinstance(item, Mapping) else (lambda _name: None)
    if len(fields) == 1:
        return get(fields[0])
    return tuple(get(name) for name in fields)


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What became of one item.

    ``accepted``: the API took it (it becomes readable after the visibility delay).
    ``rejected``: the API refused it, with its reasons in ``errors``; sending it again
    unchanged will not help. ``failed``: the batch never got an answer (transient errors
    after the transport's retries); sending it again later may succeed. A failed item may
    still have been applied (a connection dropped after the API took the batch): saves
    insert or update by id, so sending it again never duplicates it.

    ``item`` is the original item for rejected and failed outcomes only, so that they can
    be quarantined or replayed; accepted outcomes hold no payload, which keeps a run over
    millions of items small. ``batch`` numbers the batches of a run from 0 in input order;
    ``splits`` says how many times that batch was halved before this item's answer came
    (0 when the batch went through whole).
    """

    key: Hashable
    status: Status
    errors: tuple[str, ...] = ()
    item: Mapping[str, Any] | None = field(default=None, repr=False)
    batch: int = 0
    splits: int = 0


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
        setattr(self, outcome.status, getattr(self, outcome.status) + 1)
