"""How a stream is read so that every record comes once, in ascending (updatedAt, id) order.

- Sortable streams (``sortKey: UPDATED_AT``) are walked by cursor over one search window
  ``updated_at:>='<cursor's second>' AND updated_at:<='<until>'``. Shopify's cursors are
  keyset cursors (last value and id), so records sharing one second across a page boundary
  are neither skipped nor repeated, and a record changed mid-walk moves to the end. The
  window's lower bound is the cursor's second, inclusive: records at or before the cursor
  are dropped here, as are any outside the window (a timestamp filter is re-checked).
- A window holding ``bulk_threshold`` records or more (asked with the count query) is read
  by bulk operations instead, split so that none holds more than ``bulk_window_records``;
  a job's records come in no order, so each window is sorted before it is handed on. A job
  that fails is retried on two halves of its window, and a window of one second that still
  fails is walked page by page.
- Abandoned checkouts can be filtered by ``updated_at`` but not sorted by it: windows small
  enough (``sort_window_records``) are read whole in id order, then sorted.
- Nested connections come ``nested_page_size`` nodes at a time; a node with more is
  followed up with ``node(id:)`` until complete.
- A page too costly for one query (``MAX_COST_EXCEEDED``, or dearer than the bucket) is
  asked again with fewer nodes; the smaller size is kept for the rest of the read.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.sources.base import Position, RawRecord, SourceError
from connectors.sources.shopify.bulk import BulkFailed, BulkReader
from connectors.sources.shopify.client import QueryTooCostly, ShopifyClient
from connectors.sources.shopify.queries import StreamQuery, window

log = logging.getLogger("shopsync.sources.shopify")
PositionOf = Callable[[RawRecord], Position]
#: Shopify opened in 2006: no record changed before
ORIGIN = datetime(2006, 1, 1, tzinfo=UTC)
SECOND = timedelta(seconds=1)
MAX_SPLITS = 6


def _floor(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


class Pager:
    def __init__(self, client: ShopifyClient) -> None:
        self.client = client
        self.config = client.config
        self.bulk = BulkReader(client)
        self._first: dict[str, int] = {}

    # one query, made small enough ------------------------------------------------------

    def _shrunk(self, key: str, size: int, exc: QueryTooCostly) -> int:
        if size <= 1:
            raise SourceError(f"one {key} node alone costs {exc.cost} points, more than"
                              f" {exc.limit}: the query cannot be made smaller") from exc
        smaller = max(1, min(size - 1, math.floor(size * exc.limit / max(exc.cost, 1) * 0.9)))
        log.info("%s: a page of %d costs %d > %d points; asking for %d", key, size, exc.cost,
                 exc.limit, smaller)
        self._first[key] = smaller
        return smaller

    async def fitted(self, key: str, query: str, variables: dict[str, Any],
                     size: int) -> dict[str, Any]:
        """``query`` with ``first`` at most ``size``, smaller until Shopify accepts its cost."""
        size = min(size, self._first.get(key, size))
        while True:
            try:
                return await self.client.execute(query, {**variables, "first": size}, size=size)
            except QueryTooCostly as exc:
                size = self._shrunk(key, size, exc)

    # paged walks -----------------------------------------------------------------------

    async def walk(self, spec: StreamQuery, search: str | None) -> AsyncIterator[list[RawRecord]]:
        """Every record matching ``search``, page by page, in the API's order."""
        after = None
        nested = {"nested": self.config.nested_page_size} if spec.nested else {}
        while True:
            data = await self.fitted(spec.root, spec.page(),
                                     {"after": after, "query": search, **nested},
                                     self.config.page_size)
            connection = data.get(spec.root) or {}
            nodes = connection.get("nodes") or []
            await self._complete(spec, nodes)
            if nodes:
                yield nodes
            info = connection.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")

    async def _complete(self, spec: StreamQuery, nodes: list[RawRecord]) -> None:
        """Follow up nested connections longer than their first page."""
        for node in nodes:
            for name in spec.nested:
                connection = node.get(name) or {}
                info = connection.get("pageInfo") or {}
                while info.get("hasNextPage"):
                    data = await self.fitted(f"{spec.root}.{name}", spec.more(name),
                                             {"id": node["id"], "after": info.get("endCursor")},
                                             250)
                    more = ((data.get("node") or {}).get(name)) or {}
                    connection.setdefault("nodes", []).extend(more.get("nodes") or [])
                    info = more.get("pageInfo") or {}
                connection["pageInfo"] = {"hasNextPage": False, "endCursor": None}

    async def count(self, spec: StreamQuery, search: str | None, limit: int | None) -> int:
        """How many records match (at least ``limit`` when there are more)."""
        data = await self.client.execute(spec.counting(), {"query": search, "limit": limit})
        return int(((data.get(spec.count or "") or {}).get("count")) or 0)

    async def ids(self, spec: StreamQuery) -> AsyncIterator[list[str]]:
        after = None
        while True:
            data = await self.fitted(f"{spec.root}.ids", spec.ids(), {"after": after}, 250)
            connection = data.get(spec.root) or {}
            batch = [str(n["id"]).rsplit("/", 1)[-1] for n in connection.get("nodes") or []]
            if batch:
                yield batch
            info = connection.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")

    # incremental reads -----------------------------------------------------------------

    async def incremental(self, spec: StreamQuery, position: PositionOf, after: Position | None,
                          until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        """Records with ``after < position <= until`` in ascending position order."""
        lower = _floor(after.changed_at) if after is not None else None
        upper = _floor(until) if until is not None else None
        last = after

        def keep(records: list[RawRecord]) -> list[RawRecord]:
            nonlocal last
            fresh = []
            for record in records:
                at = position(record)
                if (last is None or last < at) and (until is None or at.changed_at <= until):
                    fresh.append(record)
                    last = at
            return fresh

        if spec.sort_key is None:
            async for page in self._sorted_windows(spec, position, lower, upper):
                if fresh := keep(page):
                    yield fresh
            return
        search = window(lower, upper)
        threshold = self.config.bulk_threshold
        if spec.bulk and threshold and spec.count and await self.count(spec, search, threshold) >= threshold:
            async for page in self._bulk_windows(spec, position, lower, upper):
                if fresh := keep(page):
                    yield fresh
            return
        async for page in self.walk(spec, search):
            if fresh := keep(sorted(page, key=lambda r: position(r).key())):
                yield fresh

    async def _split(self, spec: StreamQuery, lower: datetime | None, upper: datetime | None,
                     limit: int) -> list[tuple[datetime, datetime]]:
        """Windows covering ``[lower, upper]`` holding at most ``limit`` records each (a
        single second holds what it holds)."""
        start = lower or ORIGIN
        end = upper or _floor(datetime.now(UTC)) + 2 * SECOND
        out: list[tuple[datetime, datetime]] = []
        pending = [(start, end)]
        while pending:
            low, high = pending.pop()
            n = await self.count(spec, window(low, high), limit + 1)
            if n == 0:
                continue
            if n <= limit or high - low < SECOND:
                out.append((low, high))
                continue
            middle = _floor(low + (high - low) / 2)
            pending += [(middle + SECOND, high), (low, middle)]
        return out

    def _chunks(self, records: list[RawRecord]) -> list[list[RawRecord]]:
        size = self.config.page_size
        return [records[i:i + size] for i in range(0, len(records), size)]

    async def _sorted_windows(self, spec: StreamQuery, position: PositionOf,
                              lower: datetime | None, upper: datetime | None
                              ) -> AsyncIterator[list[RawRecord]]:
        for low, high in await self._split(spec, lower, upper, self.config.sort_window_records):
            records = [r async for page in self.walk(spec, window(low, high)) for r in page]
            for chunk in self._chunks(sorted(records, key=lambda r: position(r).key())):
                yield chunk

    async def _bulk_windows(self, spec: StreamQuery, position: PositionOf,
                            lower: datetime | None, upper: datetime | None
                            ) -> AsyncIterator[list[RawRecord]]:
        for low, high in await self._split(spec, lower, upper, self.config.bulk_window_records):
            async for chunk in self._bulk_window(spec, position, low, high, 0):
                yield chunk

    async def _bulk_window(self, spec: StreamQuery, position: PositionOf, low: datetime,
                           high: datetime, depth: int) -> AsyncIterator[list[RawRecord]]:
        try:
            records = await self.bulk.read(spec, window(low, high))
        except BulkFailed as exc:
            if high - low >= SECOND and depth < MAX_SPLITS:
                middle = _floor(low + (high - low) / 2)
                log.warning("%s; reading %s..%s as two halves", exc, low, high)
                for part in ((low, middle), (middle + SECOND, high)):
                    if not await self.count(spec, window(*part), 1):
                        continue  # an empty half needs no job
                    async for chunk in self._bulk_window(spec, position, *part, depth + 1):
                        yield chunk
                return
            log.warning("%s; reading %s..%s page by page", exc, low, high)
            async for page in self.walk(spec, window(low, high)):
                yield sorted(page, key=lambda r: position(r).key())
            return
        for chunk in self._chunks(sorted(records, key=lambda r: position(r).key())):
            yield chunk
