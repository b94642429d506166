"""The sandbox's listing engine: filter, sort, paginate and project records, and wrap a
page in the List envelope. Reading the listing parameters into a ``ListQuery`` is
``listing_parse.py``'s job.

Filter semantics (record value ``r``, filter values ``v``):

* each ``v`` is coerced to the type of ``r``: booleans from ``true``/``false``/``1``/``0``,
  numbers from numeric strings (so ``"9" < "10"`` is numeric when ``r`` is a number),
  datetimes when both ``r`` and ``v`` are ISO 8601 timestamps (a missing offset means UTC);
  when no coercion applies both sides are compared as strings (JSON spelling: ``true``,
  ``5``, ``2.5``).
* EQUALS and ordering comparisons on strings are case-sensitive; CONTAINS, NOT_CONTAINS,
  STARTS_WITH, ENDS_WITH and LIKE are case-insensitive substring/pattern matches. LIKE uses
  SQL wildcards ``%`` and ``_``; a backslash escapes them; it is matched without
  backtracking, in time linear in the text (``matching._like``). BETWEEN is inclusive.
* ``r`` null (or absent) matches only EQUALS/IN with a null value (JSON ``null`` or the
  string ``"null"``), and NOT_EQUALS/NOT_IN without one (SQL-like: it never satisfies a
  comparison, a pattern or a range, negated or not).
* ``r`` a list (``group_ids``, ``category_ids``): the positive operators match when any
  element matches; NOT_EQUALS, NOT_IN, NOT_CONTAINS and NOT_BETWEEN match when no element
  matches the positive counterpart.

Sorting is stable and total over mixed values: nulls, booleans, numbers, timestamps (by
instant, whatever their spelling), then text by code point; ``desc`` reverses it all.

A request lists through :func:`run_list_query`, which gives way to other requests every few
milliseconds and refuses a listing past its budget of work (``limits.py``), so one costly
listing cannot hold up the rest.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import LISTING_SLICE_SECONDS, LISTING_WORK_SECONDS
from sandbox.marketing.listing_parse import (
    ListQuery,
)
from sandbox.marketing.matching import Record, filter_predicate, sort_key
from sandbox.marketing.spec.query import OrderBy


def apply_list_query(
    records: Iterable[Record], q: ListQuery, *, default_order: Sequence[OrderBy]
) -> tuple[list[dict[str, Any]], int]:
    """Filter, sort (stable; nulls first ascending), page and project records, at once.

    Returns:
        The page of (copied) records and the number of records matching the filters.
    """
    steps = _list_steps(records, q, default_order)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


async def run_list_query(
    records: Iterable[Record],
    q: ListQuery,
    *,
    default_order: Sequence[OrderBy],
    budget: float = LISTING_WORK_SECONDS,
) -> tuple[list[dict[str, Any]], int]:
    """``apply_list_query`` for a request: it gives way to other requests every
    ``LISTING_SLICE_SECONDS`` of work, and refuses the listing (400) once it has worked
    ``budget`` seconds. ``records`` must not change while it runs (pass a copy, or views
    built from one): other requests may write meanwhile.

    Raises:
        ApiError: 400 when the listing needs more than its budget.
    """
    steps = _list_steps(records, q, default_order)
    worked = 0.0
    started = time.monotonic()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        now = time.monotonic()
        if now - started < LISTING_SLICE_SECONDS:
            continue
        worked += now - started
        if worked > budget:
            steps.close()
            raise ApiError(400, (
                f"This listing needs more than the {budget:g} s of work a request may take;"
                " narrow it: filter on ids (IN, EQUALS), use fewer or simpler text filters"
                " (LIKE, CONTAINS) or no order"))
        await asyncio.sleep(0)
        started = time.monotonic()


#: records (or sort keys) handled between two chances to give way
_STEP = 128


def _list_steps(
    records: Iterable[Record], q: ListQuery, default_order: Sequence[OrderBy]
) -> Generator[None, None, tuple[list[dict[str, Any]], int]]:
    """The work of a listing, yielding every ``_STEP`` records so that the caller can stop
    or let others run; returns (page, number of records matching)."""
    predicate = filter_predicate(q.filters, q.or_filters)
    matching: list[Record] = []
    for count, record in enumerate(records, 1):
        if predicate is None or predicate(record):
            matching.append(record)
        if count % _STEP == 0:
            yield
    for criterion in reversed(q.order or default_order):
        key = sort_key(criterion.field)
        keys = []
        for count, record in enumerate(matching, 1):
            keys.append(key(record))
            if count % _STEP == 0:
                yield
        # stable, as one sort per criterion (last first) must be; reversed too
        places = sorted(range(len(matching)), key=keys.__getitem__,
                        reverse=criterion.type == "desc")
        matching = [matching[i] for i in places]
        yield
    page = matching[q.offset : q.offset + q.limit]
    if q.fields is None:
        return [dict(r) for r in page], len(matching)
    return [{f: r.get(f) for f in q.fields} for r in page], len(matching)


def list_envelope(page: list[dict[str, Any]], total: int, q: ListQuery) -> dict[str, Any]:
    """The spec's List envelope around one page.

    ``current_page`` is ``offset // limit + 1``; past the end, ``previous_page`` points at
    the last page that has records (or 1), so a client can always step back into data.
    """
    current = q.offset // q.limit + 1
    total_pages = math.ceil(total / q.limit)
    has_next = q.offset + q.limit < total
    has_previous = q.offset > 0
    return {
        "statusCode": 200,
        "data": page,
        "meta": {
            "pagination": {
                "total_items": total,
                "items_per_page": q.limit,
                "total_pages": total_pages,
                "current_page": current,
                "offset": q.offset,
                "has_previous_page": has_previous,
                "has_next_page": has_next,
                "next_page": current + 1 if has_next else None,
                "previous_page": max(1, min(current - 1, total_pages)) if has_previous else None,
            },
            "generated_at": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        },
    }


def record_filter(q: ListQuery) -> Callable[[Record], bool]:
    """The filters of ``q`` as one predicate (segments use it to pick their contacts)."""
    predicate = filter_predicate(q.filters, q.or_filters)
    return predicate or (lambda record: True)
