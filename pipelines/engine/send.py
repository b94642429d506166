"""Items sent with the bulk writer, each writer outcome turned into what the ledger records.

The sync sends what it mapped, and what failed or was refused before; reconciliation sends
again what never showed. All of them go through ``send``, so an outcome is recorded the
same way whoever sent the item. The writer's outcomes are taken a batch at a time: most
items are accepted, and an accepted item sent as accepted is recorded as it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import STATUSES, BatchOutcome, BulkWriter
from pipelines.engine.state import ItemStatus, Outcome

#: the writer's statuses as the ledger's, looked up once (an ``ItemStatus(…)`` call costs
#: a microsecond, once per item sent)
_STATUSES = {status: ItemStatus(status) for status in STATUSES}
_ACCEPTED = ItemStatus.ACCEPTED


def ledger_key(key: Hashable) -> str:
    """The ledger's text form of a writer key (a value, or a tuple for composite keys)."""
    return ledger_keys([key])[0]


def ledger_keys(keys: Sequence[Hashable]) -> list[str]:
    """The ledger's text form of each of ``keys`` (a value, or a tuple for composite keys):
    a batch's in one pass, without a call each."""
    return ["|".join(map(str, key)) if isinstance(key, tuple) else str(key) for key in keys]


def recorded(pending: Mapping[str, Outcome], key: str, status: ItemStatus,
             errors: list[str], item: Mapping[str, Any] | None) -> Outcome:
    """What to record of the item the writer names ``key``: the pending outcome with its
    status (itself when it already says so), or, for an item the writer names by a key it
    was not sent under, what the writer says of it."""
    known = pending.get(key)
    if known is None:
        return Outcome(key, "", status, None, errors, dict(item or {}))
    if status is known.status and not errors and not known.errors:
        return known
    return known.with_status(status, errors)


async def send(
    client: MarketingClient,
    resource: str,
    pending: Mapping[str, Outcome],
    *,
    concurrency: int,
    min_concurrency: int = 1,
    max_concurrency: int | None = None,
    on_status: Callable[[str, int], None] | None = None,
) -> list[Outcome]:
    """Send the payload of each of ``pending`` (ledger key -> what to record of the item,
    its status aside) and return the outcomes to record. ``on_status`` hears how many items
    took each writer status, a batch at a time (a report's counts)."""
    writer = BulkWriter(client, resource, concurrency=concurrency,
                        min_concurrency=min_concurrency, max_concurrency=max_concurrency)
    outcomes: list[Outcome] = []

    def collect(batch: BatchOutcome) -> None:
        if on_status is not None:
            for status, n in batch.counts().items():
                on_status(status, n)
        keys = ledger_keys(batch.keys())
        refused = batch.refused
        if not refused:
            outcomes.extend([recorded(pending, key, _ACCEPTED, [], None) for key in keys])
            return
        for index, key in enumerate(keys):
            other = refused.get(index)
            outcomes.append(
                recorded(pending, key, _ACCEPTED, [], None) if other is None
                else recorded(pending, key, _STATUSES[other.status], list(other.errors),
                              other.item)
            )

    await writer.write_all([o.payload for o in pending.values() if o.payload is not None],
                           on_batch=collect)
    return outcomes
