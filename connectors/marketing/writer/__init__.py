"""The bulk writer: push any number of items of one resource, account for every one.

    from connectors.marketing.writer import BulkWriter

    async with MarketingClient(base_url, key) as client:
        writer = BulkWriter(client, "customers", concurrency=8)   # grows up to max_concurrency
        async for outcome in writer.write(items):      # or: await writer.write_all(items)
            ledger.record(outcome.key, outcome.status, outcome.errors)

A consumer that takes a batch's outcomes at once (``write_batches``, or ``write_all``'s
``on_batch``) gets a ``BatchOutcome``: the items as sent and an outcome for each one not
accepted, with no object per accepted item.

An item may be given as its JSON already encoded (``orjson.Fragment``): it goes out as those
bytes, and its outcome has no key; the caller names it by its place in the input
(``BatchOutcome.start``).

``bulk.py`` cuts and sends batches, ``pacing.py`` decides how many are in flight (AIMD, from ``concurrency`` up to
``max_concurrency``),
``outcomes.py`` holds what comes back.
"""

from connectors.marketing.writer.bulk import MAX_CONCURRENCY, SPLIT_STATUSES, BulkWriter
from connectors.marketing.writer.outcomes import (
    STATUSES,
    BatchOutcome,
    ItemOutcome,
    LimitChange,
    Status,
    WriteSummary,
    item_key,
    item_keys,
)
from connectors.marketing.writer.pacing import AdaptiveLimiter, Aimd, BatchSignal

__all__ = [
    "MAX_CONCURRENCY",
    "SPLIT_STATUSES",
    "STATUSES",
    "AdaptiveLimiter",
    "Aimd",
    "BatchOutcome",
    "BatchSignal",
    "BulkWriter",
    "ItemOutcome",
    "LimitChange",
    "Status",
    "WriteSummary",
    "item_key",
    "item_keys",
]
