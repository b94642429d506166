"""How a stream is paged so that every record is read once even while the shop changes.

Incremental streams are read in ascending ``(date_modified_gmt, id)`` order with
``orderby=modified`` (WooCommerce appends the id as tiebreaker), always asking for page 1
again with a ``modified_after`` bound moved up to the last page's second: walking ``page``
numbers over a set that changes under the reader skips rows (a record that moves to the end
shifts everything after it one place back). The bound is exclusive and has a resolution of
one second, so it is set one second before the second to resume in, and records at or
before the cursor are dropped. When a whole page shares one second (more records in that
second than a page holds), that second alone is walked by ``page`` in id order, starting
over if its total changes, and the bound then moves past it: never an endless loop.

Full streams are walked by ``page`` in id order, starting over (and skipping ids already
read) when ``X-WP-Total`` changes mid-walk, which is when pages shift.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from connectors.sources.base import Position, RawRecord, SourceError
from connectors.sources.woocommerce.client import WooPage

log = logging.getLogger("shopsync.sources.woocommerce")

Fetch = Callable[[str, dict[str, Any]], Awaitable[WooPage]]
PositionOf = Callable[[RawRecord], Position]
Keep = Callable[[RawRecord], bool]
MAX_RESTARTS = 5


def _second(moment: datetime) -> int:
    return int(moment.timestamp() // 1)


def _gmt(second: int) -> str:
    """A naive GMT time, as ``dates_are_gmt=true`` wants it (no zone: WordPress would turn
    a zoned value into site time first)."""
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


async def walk(fetch: Fetch, path: str, params: dict[str, Any], page_size: int,
               keep: Keep | None = None) -> AsyncIterator[list[RawRecord]]:
    """Every record of ``path`` page by page (the caller's params fix the order), each once."""
    seen: set[Any] = set()
    page_no, total, restarts, previous = 1, None, 0, None
    while True:
        page = await fetch(path, {**params, "per_page": page_size, "page": page_no})
        if total is None or page_no == 1:
            total = page.total
        elif page.total != total and restarts < MAX_RESTARTS:
            log.info("%s changed while paging (total %s -> %s): starting over", path, total,
                     page.total)
            restarts, page_no, previous = restarts + 1, 1, None
            continue
        ids = [r.get("id") for r in page.records]
        if ids and ids == previous:
            raise SourceError(f"GET {path} answered the same page twice: is a cache ignoring"
                              " the page parameter?")
        previous = ids
        batch = [r for r in page.records if r.get("id") not in seen and (keep is None or keep(r))]
        seen.update(ids)
        if batch:
            yield batch
        if len(page.records) < page_size:
            return
        page_no += 1


async def incremental(fetch: Fetch, path: str, params: dict[str, Any], *, position: PositionOf,
                      after: Position | None, until: datetime | None,
                      page_size: int) -> AsyncIterator[list[RawRecord]]:
    """Pages of records with ``after < position <= until``, in ascending position order."""
    cursor = after
    upper = None if until is None else _second(until) + 1
    lower = None if after is None else _second(after.changed_at) - 1
    base = {**params, "dates_are_gmt": "true"}
    if upper is not None:
        base["modified_before"] = _gmt(upper)

    def keep(record: RawRecord) -> bool:
        at = position(record)
        return (cursor is None or cursor < at) and (until is None or at.changed_at <= until)

    while True:
        query = {**base, "orderby": "modified", "order": "asc", "per_page": page_size, "page": 1}
        if lower is not None:
            query["modified_after"] = _gmt(lower)
        records = sorted((await fetch(path, query)).records, key=position)
        fresh = [r for r in records if keep(r)]
        if fresh:
            yield fresh
            cursor = position(fresh[-1])
        if len(records) < page_size:
            return
        first = _second(position(records[0]).changed_at)
        last = _second(position(records[-1]).changed_at)
        if first == last:
            tie = {**base, "modified_after": _gmt(first - 1), "modified_before": _gmt(first + 1),
                   "orderby": "id", "order": "asc"}
            async for batch in walk(fetch, path, tie, page_size, keep):
                yield batch
                cursor = position(batch[-1])
            moved = first
        else:
            moved = last - 1
        if lower is not None and moved <= lower:
            raise SourceError(f"GET {path} ignores modified_after (the same records came back"
                              " for a later bound): WooCommerce before 5.6, or a store bug")
        lower = moved


async def merge(sources: list[AsyncIterator[list[RawRecord]]], position: PositionOf,
                page_size: int) -> AsyncIterator[list[RawRecord]]:
    """Several ascending page streams as one ascending page stream: a record is passed on
    only when every unfinished source has shown a later one, so checkpoints stay valid."""
    buffers: list[deque[RawRecord]] = [deque() for _ in sources]
    done = [False] * len(sources)
    out: list[RawRecord] = []
    while True:
        for i, source in enumerate(sources):
            if not buffers[i] and not done[i]:
                try:
                    buffers[i].extend(await anext(source))
                except StopAsyncIteration:
                    done[i] = True
        live = [i for i, buffer in enumerate(buffers) if buffer]
        if not live:
            break
        smallest = min(live, key=lambda i: position(buffers[i][0]).key())
        out.append(buffers[smallest].popleft())
        if len(out) >= page_size:
            yield out
            out = []
    if out:
        yield out
