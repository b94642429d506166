"""How a Magento stream is paged so that every record is read once even while the shop
changes: keyset pagination expressed in ``searchCriteria``.

Each request asks for page 1, sorted by ``updated_at`` then the entity id, of the records
strictly after the last one read. "After (T, I)" is ``updated_at > T OR (updated_at = T AND
id > I)``; filters inside a filter group are ORed and groups are ANDed, so it is written as
two groups: ``[updated_at gteq T]`` AND ``[updated_at gt T OR entity_id gt I]``. A third
group bounds ``updated_at lteq until``.

Why not ``currentPage``: numbered pages over a set that changes under the reader skip rows
(a record updated mid-read moves to the end and shifts the others one place back), deep
pages make Magento's collections slow (503s on big shops), and Magento 2.0–2.3 answer a page
past the end with the last page again. Keyset reads need none of that: each answer's
``total_count`` says whether more remain, and ties on one second — even more than a page —
are walked by id. ``updated_at`` has one-second resolution, in UTC without an offset.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.sources.base import Position, RawRecord, SourceError

Fetch = Callable[[str, dict[str, Any]], Awaitable[Any]]
PositionOf = Callable[[RawRecord], Position]
#: (field, value, condition_type)
Filter = tuple[str, str, str]


def magento_time(moment: datetime) -> str:
    """A UTC time as Magento compares it: ``YYYY-MM-DD HH:MM:SS`` without an offset."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def parse_time(text: str | None) -> datetime | None:
    """A Magento datetime (UTC, no offset) as an aware datetime."""
    if not text:
        return None
    moment = datetime.fromisoformat(text.strip().replace(" ", "T"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def criteria(groups: Sequence[Sequence[Filter]], sort: Sequence[tuple[str, str]] = (),
             page_size: int | None = None, page: int = 1) -> dict[str, str]:
    """``searchCriteria[...]`` query parameters: filters inside a group are ORed, groups ANDed."""
    params: dict[str, str] = {}
    for g, group in enumerate(groups):
        for f, (field, value, condition) in enumerate(group):
            prefix = f"searchCriteria[filter_groups][{g}][filters][{f}]"
            params[f"{prefix}[field]"] = field
            params[f"{prefix}[value]"] = value
            params[f"{prefix}[condition_type]"] = condition
    for s, (field, direction) in enumerate(sort):
        params[f"searchCriteria[sortOrders][{s}][field]"] = field
        params[f"searchCriteria[sortOrders][{s}][direction]"] = direction
    if page_size is not None:
        params["searchCriteria[pageSize]"] = str(page_size)
        params["searchCriteria[currentPage]"] = str(page)
    return params


def after_groups(after: Position, id_field: str) -> list[list[Filter]]:
    """The filter groups selecting records strictly after ``after``."""
    at = after.changed_at.astimezone(UTC)
    if at.microsecond:  # between two whole seconds: the next second and everything at it
        return [[("updated_at", magento_time(at.replace(microsecond=0) + timedelta(seconds=1)),
                  "gteq")]]
    if not after.record_id:  # before every id of its second
        return [[("updated_at", magento_time(at), "gteq")]]
    return [[("updated_at", magento_time(at), "gteq")],
            [("updated_at", magento_time(at), "gt"), (id_field, after.record_id, "gt")]]


def _envelope(path: str, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("items", []), list):
        raise SourceError(f"GET {path} did not answer a search result ({{items, total_count}}):"
                          " is this a Magento 2 REST root?")
    return body


def _more(body: dict[str, Any], got: int, page_size: int) -> bool:
    """Whether records remain past this page 1: from ``total_count`` when Magento sent it,
    else from a full page."""
    total = body.get("total_count")
    if isinstance(total, int):
        return total > page_size and got == page_size
    return got == page_size


async def incremental(fetch: Fetch, path: str, *, id_field: str, position: PositionOf,
                      after: Position | None, until: datetime | None, page_size: int,
                      groups: Sequence[Sequence[Filter]] = (),
                      extra: dict[str, str] | None = None) -> AsyncIterator[list[RawRecord]]:
    """Pages of records with ``after < position <= until``, in ascending position order."""
    cursor = after
    upper = None
    if until is not None:
        upper = [("updated_at", magento_time(until.replace(microsecond=0)), "lteq")]
    sort = [("updated_at", "ASC"), (id_field, "ASC")]

    def keep(record: RawRecord) -> bool:
        at = position(record)
        return (cursor is None or cursor < at) and (until is None or at.changed_at <= until)

    while True:
        wanted = [*groups, *(after_groups(cursor, id_field) if cursor else []),
                  *([upper] if upper else [])]
        body = _envelope(path, await fetch(path, {**criteria(wanted, sort, page_size),
                                                  **(extra or {})}))
        records = sorted(body.get("items") or [], key=position)
        fresh = [r for r in records if keep(r)]
        if fresh:
            yield fresh
            cursor = position(fresh[-1])
        if not _more(body, len(records), page_size):
            return
        if not fresh:
            raise SourceError(
                f"GET {path} answered a full page with nothing after the last record read:"
                " the shop ignores the searchCriteria filters (an extension rewriting the"
                " collection?) — reading on would loop")


async def walk(fetch: Fetch, path: str, *, id_field: str, id_key: str, page_size: int,
               fields: str, groups: Sequence[Sequence[Filter]] = ()) -> AsyncIterator[list[RawRecord]]:
    """Every record of ``path`` matching ``groups``, in pages walked by id, trimmed to
    ``fields`` (which must name ``id_key``; ``total_count`` is added)."""
    last: int | None = None
    while True:
        wanted = [*groups, *([[(id_field, str(last), "gt")]] if last is not None else [])]
        params = {**criteria(wanted, [(id_field, "ASC")], page_size),
                  "fields": f"{fields},total_count"}
        body = _envelope(path, await fetch(path, params))
        found = sorted(body.get("items") or [], key=lambda item: int(item[id_key]))
        fresh = [item for item in found if last is None or int(item[id_key]) > last]
        if fresh:
            yield fresh
            last = int(fresh[-1][id_key])
        if not _more(body, len(found), page_size):
            return
        if not fresh:
            raise SourceError(f"GET {path} ignores the entity id filter: reading on would loop")


async def ids(fetch: Fetch, path: str, *, id_field: str, id_key: str, page_size: int,
              groups: Sequence[Sequence[Filter]] = ()) -> AsyncIterator[list[str]]:
    """Every id of ``path``, in pages, walked by id (``fields`` trims the answer to ids)."""
    async for page in walk(fetch, path, id_field=id_field, id_key=id_key, page_size=page_size,
                           fields=f"items[{id_key}]", groups=groups):
        yield [str(int(item[id_key])) for item in page]
