"""Items sent with the bulk writer, each writer outcome turned into what the ledger records.

The sync sends what it mapped, and what failed or was refused before; reconciliation sends
again what never showed. All of them go through ``send``, so an outcome is recorded the
same way whoever sent the item.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import BulkWriter, ItemOutcome
from pipelines.engine.state import ItemStatus, Outcome


def ledger_key(key: Hashable) -> str:
    """The ledger's text form of a writer key (a value, or a tuple for composite keys)."""
    return "|".join(map(str, key)) if isinstance(key, tuple) else str(key)


async def send(
    client: MarketingClient,
    resource: str,
    pending: Mapping[str, Outcome],
    *,
    concurrency: int,
    min_concurrency: int = 1,
    max_concurrency: int | None = None,
    on_status: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Send the payload of each of ``pending`` (ledger key -> what to record of the item,
    its status aside) and return the outcomes to record. ``on_status`` hears each writer
    status as it comes (a report's counts)."""
    writer = BulkWriter(client, resource, concurrency=concurrency,
                        min_concurrency=min_concurrency, max_concurrency=max_concurrency)
    outcomes: list[Outcome] = []

    def collect(outcome: ItemOutcome) -> None:
        key = ledger_key(outcome.key)
        if on_status is not None:
            on_status(outcome.status)
        status, errors = ItemStatus(outcome.status), list(outcome.errors)
        known = pending.get(key)
        outcomes.append(
            known.with_status(status, errors) if known is not None
            # an item the writer names by a key it was not sent under: what it says of it
            else Outcome(key, "", status, None, errors, dict(outcome.item or {}))
        )

    await writer.write_all((o.payload for o in pending.values() if o.payload is not None),
                           on_outcome=collect)
    return outcomes
