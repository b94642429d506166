"""What the Magento connector's tests share: a connector on a fake shop with a fast retry
policy, and reads of records, positions and id listings through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from itertools import pairwise
from typing import Any

from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, RawRecord
from connectors.sources.magento import MagentoConnector
from connectors.sources.magento.connector import position_of
from sandbox.shops.magento.launch import RunningFakeMagento

#: patient in attempts, without the waits (Retry-After is capped to 10 ms)
FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
INCREMENTAL = ("orders", "customers", "products", "carts", "categories")
Start = Callable[..., RunningFakeMagento]


def connector(running: RunningFakeMagento, **options: Any) -> MagentoConnector:
    options.setdefault("retry", FAST)
    return MagentoConnector(running.api_url, options.pop("token", running.token), **options)


def read(running: RunningFakeMagento, stream: str, *, after: Position | None = None,
         until: datetime | None = None, **options: Any) -> list[RawRecord]:
    async def records() -> list[RawRecord]:
        async with connector(running, **options) as source:
            return [r async for page in source.read(stream, after=after, until=until) for r in page]

    return asyncio.run(records())


def listed_ids(running: RunningFakeMagento, stream: str, **options: Any) -> list[str]:
    async def ids() -> list[str]:
        async with connector(running, **options) as source:
            return [i async for page in source.ids(stream) for i in page]

    return asyncio.run(ids())


def keys(stream: str, records: list[RawRecord]) -> list[str]:
    return [position_of(stream, r).record_id for r in records]


def ascending(stream: str, records: list[RawRecord]) -> bool:
    return all(a < b for a, b in pairwise(position_of(stream, r) for r in records))
