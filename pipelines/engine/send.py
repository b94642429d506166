"""Items sent with the bulk writer, each writer outcome turned into what the ledger records.

The sync sends what it mapped, and what failed or was refused before; reconciliation sends
again what never showed. All of them go through ``send``, so an outcome is recorded the
same way whoever sent the item. The writer's outcomes are taken a batch at a time: most
items are accepted, and an accepted item sent as accepted is recorded as it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import STATUSES, BatchOutcome, BulkWriter
from pipelines.engine.state import ItemStatus, Outcome, Payload

#: the writer's statuses as the ledger's, looked up once (an ``ItemStatus(…)`` call costs
#: a microsecond, once per item sent)
_STATUSES = {status: ItemStatus(status) for status in STATUSES}
_ACCEPTED = ItemStatus.ACCEPTED


def ledger_key(key: Hashable) -> str:
    """The ledger's text form of a writer key (a value, or a tuple for composite keys)."""
    return "|".join(map(str, key)) if isinstance(key, tuple) else str(key)


def recorded(known: Outcome, status: ItemStatus, errors: list[str]) -> Outcome:
    """What to record of a pending item the writer says took ``status``: the pending outcome
    with that status (itself when it already says so)."""
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

    # each item is named by its place in what the writer was given, not by the key fields
    # its payload holds: an item read in a process of its own comes encoded
    # (``gate.EncodedItem``), and no id is read back out of it
    sent: list[Outcome] = []
    payloads: list[Payload] = []
    for o in pending.values():
        if o.payload is not None:
            sent.append(o)
            payloads.append(o.payload)

    def collect(batch: BatchOutcome) -> None:
        if on_status is not None:
            for status, n in batch.counts().items():
                on_status(status, n)
        known = sent[batch.start:batch.start + len(batch.items)]
        refused = batch.refused
        if not refused:
            outcomes.extend([recorded(o, _ACCEPTED, []) for o in known])
            return
        for index, o in enumerate(known):
            other = refused.get(index)
            outcomes.append(recorded(o, _ACCEPTED, []) if other is None
                            else recorded(o, _STATUSES[other.status], list(other.errors)))

    await writer.write_all(payloads, on_batch=collect)
    return outcomes
