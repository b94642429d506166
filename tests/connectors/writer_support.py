"""What the bulk writer's tests share: items to push, a push through a real client,
and reading back what a sandbox received.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.samples import sample_item
from connectors.marketing.writer import BulkWriter, ItemOutcome

#: retries as patient as the default policy in attempts, but without its waits
FAST = RetryPolicy(max_attempts=8, initial_backoff=0.001, max_backoff=0.01, jitter=0.005)
#: for reading back what a faulty sandbox holds: a failed read must not fail the test
PATIENT = RetryPolicy(max_attempts=30, initial_backoff=0.001, max_backoff=0.01, jitter=0.005)


def customer(i: int | str, prefix: str = "c", **overrides: Any) -> dict[str, Any]:
    fields = {"customer_id": f"{prefix}{i}", "email": f"{prefix}{i}@example.com", **overrides}
    return sample_item("customers", **fields)


async def push(
    base_url: str,
    key: str,
    items: Any,
    resource: str = "customers",
    retry: RetryPolicy = FAST,
    transport: httpx.AsyncBaseTransport | None = None,
    **options: Any,
) -> tuple[list[ItemOutcome], BulkWriter]:
    async with MarketingClient(base_url, key, retry=retry, transport=transport) as client:
        writer = BulkWriter(client, resource, **options)
        outcomes = [outcome async for outcome in writer.write(items)]
    return outcomes, writer


def sandbox_stats(running: Any, key: str) -> dict[str, Any]:
    answer = httpx.get(running.root + "/_sandbox/stats", headers={"spm-api-key": key})
    return answer.json()["data"]


def by_key(outcomes: list[ItemOutcome]) -> dict[Any, ItemOutcome]:
    found = {o.key: o for o in outcomes}
    assert len(found) == len(outcomes), "an item has more than one outcome"
    return found


async def stored_among(base_url: str, key: str, ids: list[str]) -> set[str]:
    """Which of ``ids`` the sandbox holds, asked with IN filters (a few hundred at a time)."""
    found: set[str] = set()
    async with MarketingClient(base_url, key, retry=PATIENT) as client:
        for start in range(0, len(ids), 200):
            chunk = ids[start:start + 200]
            criterion = {"field": "customer_id", "operator": "IN", "values": chunk}
            page = await client.transport.request(
                "GET", "customers",
                params={"fields": "customer_id", "limit": 1000, "filters": json.dumps(criterion)},
            )
            found.update(r["customer_id"] for r in page["data"])
    return found


class CountingItems:
    """Items made on demand, counting how many the writer has taken."""

    def __init__(self, n: int, prefix: str = "c") -> None:
        self.n = n
        self.prefix = prefix
        self.taken = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self.n):
            self.taken += 1
            yield customer(i, self.prefix)
