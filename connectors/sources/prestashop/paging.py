"""How a PrestaShop list is read so that every record comes once even while the shop
changes: keyset pagination, never growing offsets.

Growing the offset of ``limit=offset,count`` over a list that changes under the reader skips
rows (a record saved mid-read moves to the end and shifts everything after it back one
place), and the webservice gives no totals to notice it. So every page is ``limit=0,count``,
with the lower bound moved instead:

- incremental streams: ``date=1&filter[date_upd]=[lower,upper]&sort=[date_upd_ASC,id_ASC]``
  in shop-local time. The interval is inclusive on both ends, so the next page starts at
  the last page's second again and the records at or before the cursor are dropped. When
  a whole page shares one second, that second alone is walked by id
  (``filter[id]=>[last id]&sort=[id_ASC]``) and the bound then moves past it.
- full streams and id lists: ``filter[id]=>[last id]&sort=[id_ASC]``.
- an incremental stream's first read in key order (``changed_by_id``): the id walk within
  ``filter[date_upd]=[since,until]``.

A short page ends a walk. Records are re-checked against the bounds on this side too (a
shop has been seen answering rows outside a date filter, PrestaShop issue 12385), and a
server that ignores the filters fails loudly instead of looping.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from connectors.sources.base import Position, RawRecord, SourceError
from connectors.sources.prestashop.values import (
    EPOCH,
    LOCAL_FORMAT,
    ZERO_DATE,
    as_int,
    is_zero_date,
    utc_to_local,
)

Fetch = Callable[[str, dict[str, Any]], Awaitable[list[RawRecord]]]
PositionOf = Callable[[RawRecord], Position]
LAST_DATE = "9999-12-31 23:59:59"


def local_second(record: RawRecord) -> str:
    """The record's ``date_upd`` as the shop wrote it (a zero date when it has none)."""
    value = record.get("date_upd")
    return ZERO_DATE if is_zero_date(value) else str(value)


def next_second(local: str) -> str:
    if is_zero_date(local):
        return "1000-01-01 00:00:00"  # MySQL's first real DATETIME
    return (datetime.strptime(local, LOCAL_FORMAT) + timedelta(seconds=1)).strftime(LOCAL_FORMAT)


async def by_id(fetch: Fetch, resource: str, params: dict[str, Any], page_size: int,
                after_id: int = 0) -> AsyncGenerator[list[RawRecord], None]:
    """Every record of ``resource`` (``params`` may filter it) in ascending id order."""
    last = after_id
    while True:
        query = {**params, "sort": "[id_ASC]", "limit": f"0,{page_size}"}
        if last:
            query["filter[id]"] = f">[{last}]"
        raw = await fetch(resource, query)
        records = sorted((r for r in raw if as_int(r.get("id")) > last),
                         key=lambda r: as_int(r.get("id")))
        if records:
            yield records
        if len(raw) < page_size:
            return
        highest = max(as_int(r.get("id")) for r in raw)
        if highest <= last:
            raise SourceError(f"GET {resource} ignores filter[id] (the same records came back"
                              " for a higher bound)")
        last = highest


async def changed(fetch: Fetch, resource: str, params: dict[str, Any], *, position: PositionOf,
                  after: Position | None, until: datetime | None, timezone: str,
                  page_size: int) -> AsyncGenerator[list[RawRecord], None]:
    """Pages of records with ``after < position <= until`` in ascending position order."""
    if after is not None and until is not None and until <= after.changed_at:
        return
    upper = LAST_DATE if until is None else utc_to_local(until, timezone)
    lower = ZERO_DATE if after is None or after.changed_at <= EPOCH \
        else utc_to_local(after.changed_at, timezone)
    base = {**params, "display": "full", "date": "1"}
    cursor = after

    def keep(record: RawRecord) -> bool:
        at = position(record)
        return (cursor is None or cursor < at) and (until is None or at.changed_at <= until)

    while lower <= upper:
        raw = await fetch(resource, {**base, "filter[date_upd]": f"[{lower},{upper}]",
                                     "sort": "[date_upd_ASC,id_ASC]",
                                     "limit": f"0,{page_size}"})
        records = sorted(raw, key=position)
        fresh = [r for r in records if keep(r)]
        if fresh:
            yield fresh
            cursor = position(fresh[-1])
        if len(raw) < page_size:
            return
        first, last = local_second(records[0]), local_second(records[-1])
        if first == last:
            start = 0
            if cursor is not None and cursor.record_id.isascii() and cursor.record_id.isdigit() and \
                    utc_to_local(cursor.changed_at, timezone) == first:
                start = int(cursor.record_id)
            async for batch in by_id(fetch, resource,
                                     {**base, "filter[date_upd]": f"[{first},{first}]"},
                                     page_size, after_id=start):
                kept = [r for r in batch if keep(r)]
                if kept:
                    yield kept
                    cursor = position(kept[-1])
            moved = next_second(first)
        else:
            moved = last
        if moved <= lower:
            raise SourceError(f"GET {resource} ignores filter[date_upd] (the same records came"
                              " back for a later bound): is date=1 dropped on the way?")
        lower = moved


async def changed_by_id(fetch: Fetch, resource: str, params: dict[str, Any], *,
                        position: PositionOf, since: datetime | None, until: datetime,
                        timezone: str, page_size: int,
                        after_id: int = 0) -> AsyncGenerator[list[RawRecord], None]:
    """Pages of the records changed from ``since`` up to ``until``, in ascending id order,
    after ``after_id``: the id walk within the window of change time, re-checked here."""
    lower = ZERO_DATE if since is None or since <= EPOCH else utc_to_local(since, timezone)
    window = {**params, "display": "full", "date": "1",
              "filter[date_upd]": f"[{lower},{utc_to_local(until, timezone)}]"}

    def inside(record: RawRecord) -> bool:
        at = position(record).changed_at
        return (since is None or since <= at) and at <= until

    async for page in by_id(fetch, resource, window, page_size, after_id=after_id):
        kept = [r for r in page if inside(r)]
        if kept:
            yield kept
