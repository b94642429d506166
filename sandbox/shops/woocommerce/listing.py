"""Collection requests: filter, order and page rows as WP_Query would, then answer with the
pagination headers (``X-WP-Total``, ``X-WP-TotalPages``, ``Link``).

Choices (see README.md): ``after``/``before``/``modified_*`` are both exclusive bounds with
second precision (WP_Date_Query without ``inclusive``); a naive value is compared with the
local column unless ``dates_are_gmt``; a value with a zone is first turned into site-local
time, as WP_Date_Query does, whatever ``dates_are_gmt`` says. ``orderby=date|modified`` sorts
on the GMT column with the id as tiebreaker (HPOS order tables do; the posts table sorts on
the local column, which differs only during the autumn DST hour).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from sandbox.shops.people import slugify
from sandbox.shops.table import Span, every
from sandbox.shops.woocommerce.data import Row
from sandbox.shops.woocommerce.records import product_category
from sandbox.shops.woocommerce.store import Store

Predicate = Callable[[Row], bool]


def _date_bounds(store: Store, params: dict[str, Any], sliced: bool) -> list[Predicate]:
    gmt = bool(params.get("dates_are_gmt"))
    checks: list[Predicate] = []
    bounds = [("after", "created", True), ("before", "created", False)]
    if not sliced:
        bounds += [("modified_after", "modified", True), ("modified_before", "modified", False)]
    for name, column, after in bounds:
        given = params.get(name)
        if given is None:
            continue
        value, zoned = given
        if zoned:
            value = store.local(value)  # WP_Date_Query renders zoned values in site time

        def check(r: Row, c: str = column, v: int = value, a: bool = after) -> bool:
            at = getattr(r, c)
            if not gmt:
                at = store.local(at)
            return at > v if a else at < v

        checks.append(check)
    return checks


def _gmt_modified_cut(store: Store, keys: list[int], params: dict[str, Any]) -> tuple[int, int]:
    """Where the GMT modified window starts and ends in rows sorted by modified (the hot
    path of incremental readers), by bisect instead of testing every row."""
    low, high = 0, len(keys)
    if params.get("modified_after") is not None:
        value, zoned = params["modified_after"]
        low = bisect_right(keys, store.local(value) if zoned else value)
    if params.get("modified_before") is not None:
        value, zoned = params["modified_before"]
        high = bisect_left(keys, store.local(value) if zoned else value)
    return low, high


def _status(resource: str, params: dict[str, Any]) -> Predicate | None:
    """The resource's status filter: it depends on ``status`` alone, so the rows it keeps
    are a view of the table (``Table.where``)."""
    if resource == "orders":
        statuses = set(params["status"])
        if "any" in statuses:  # 'any' short-circuits the list, and never includes trash
            return lambda r: r.status not in ("trash", "checkout-draft")
        return lambda r: r.status in statuses
    if resource in ("products", "variations"):
        status = params["status"]
        return (lambda r: r.status != "trash") if status == "any" else (lambda r: r.status == status)
    if resource == "coupons":
        return lambda r: r.status != "trash"
    return None


def _filters(store: Store, resource: str, params: dict[str, Any], sliced: bool) -> list[Predicate]:
    checks: list[Predicate] = []
    if params.get("include"):
        wanted = set(params["include"])
        checks.append(lambda r: r.id in wanted)
    if params.get("exclude"):
        unwanted = set(params["exclude"])
        checks.append(lambda r: r.id not in unwanted)
    if resource == "orders":
        if params.get("customer") is not None:
            checks.append(lambda r: r.customer == params["customer"])
    elif resource in ("products", "variations"):
        if params.get("type"):
            checks.append(lambda r: r.kind == params["type"])
        if params.get("sku"):
            skus = set(params["sku"].split(","))
            checks.append(lambda r: store.record(resource, r)["sku"] in skus)
        if params.get("category"):
            wanted_slugs = {store.tables["categories"].rows[int(c)].kind
                            for c in params["category"].split(",")
                            if c.isdigit() and int(c) in store.tables["categories"].rows}
            checks.append(lambda r: product_category(r) in wanted_slugs)
    elif resource == "coupons":
        if params.get("code"):
            checks.append(lambda r: r.name.lower() == params["code"].lower())
    elif resource == "customers":
        if params["role"] != "all":
            checks.append(lambda r: r.kind == params["role"])
        if params.get("email"):
            checks.append(lambda r: store.record(resource, r)["email"] == params["email"])
    elif resource == "categories":
        if params.get("parent") is not None:
            checks.append(lambda r: r.parent == params["parent"])
        if params.get("slug"):
            checks.append(lambda r: r.kind == params["slug"])
        if params.get("hide_empty"):
            checks.append(lambda r: store.category_counts.get(r.kind, 0) > 0)
    if params.get("search"):
        needle = params["search"].casefold()
        checks.append(lambda r: needle in r.name.casefold())
    return checks + _date_bounds(store, params, sliced)


_SORTED = frozenset({"title", "name", "description", "term_group", "slug", "include", "price"})


def _sort(rows: list[Row], orderby: str, params: dict[str, Any]) -> list[Row]:
    if orderby in ("title", "name", "description", "term_group"):
        return sorted(rows, key=lambda r: (r.name.casefold(), r.id))
    if orderby == "slug":
        return sorted(rows, key=lambda r: (r.kind if not r.created else slugify(r.name), r.id))
    if orderby == "include":
        position = {rid: i for i, rid in enumerate(params.get("include") or ())}
        return sorted(rows, key=lambda r: (position.get(r.id, len(position)), r.id))
    return sorted(rows, key=lambda r: (r.amount, r.id))  # price


def _one_second(keys: list[int], low: int, high: int) -> bool:
    """Whether the rows ``low:high`` of a view sorted by (modified, id) all changed in the
    same second: they are then in id order too."""
    return high - low < 2 or keys[low] == keys[high - 1]


def select(store: Store, resource: str, params: dict[str, Any],
           within: Sequence[Row] | None = None) -> tuple[list[Row], int]:
    """The rows of the requested page and the total number of matching rows, among
    ``within`` (a product's variations) when given. The status filter and the GMT modified
    window come from views kept until the next change (ordered by modified, or by id inside
    a window: the walk of a second that holds more records than a page), so that a page
    costs the same in a large shop as in a small one; other filters test each row."""
    table = store.tables[resource]
    orderby = params["orderby"]
    gmt = bool(params.get("dates_are_gmt"))
    window = params.get("modified_after") is not None or params.get("modified_before") is not None
    sliced = gmt and (orderby == "modified" or (orderby == "id" and window))
    by = "modified" if sliced else {"date": "created", "registered_date": "created",
                                    "modified": "modified"}.get(orderby, "id")
    status = _status(resource, params)
    checks = _filters(store, resource, params, sliced)
    if within is not None:
        rows = sorted(within, key=table.sort_keys[by])
        keys = [getattr(r, by) for r in rows]
        checks += [status] if status else []
    elif status is None:
        rows, keys = table.ordered(by), table.keys(by)
    else:
        rows, keys = table.where(by, f"status={params.get('status')!r}", status)
    low, high = _gmt_modified_cut(store, keys, params) if sliced else (0, len(rows))
    matched = Span(rows, low, high)
    if checks:
        check = every(checks)
        matched = Span([r for r in rows[low:high] if check(r)])
    if sliced and orderby == "id" and not _one_second(keys, low, high):
        matched = Span(sorted(matched.page(0, len(matched)), key=lambda r: r.id))
    if orderby in _SORTED:
        matched = Span(_sort(matched.page(0, len(matched)), orderby, params))
    per_page = params["per_page"]
    start = params["offset"] if params.get("offset") is not None else (params["page"] - 1) * per_page
    # FIELD(ID, …) ignores order
    descending = params["order"] == "desc" and orderby != "include"
    return matched.page(start, per_page, descending=descending), len(matched)


def pagination_headers(request: Request, total: int, page: int, per_page: int) -> list[tuple[str, str]]:
    """X-WP-Total, X-WP-TotalPages and one Link header per relation (prev, next), with the
    request's own query string and ``page`` replaced, as WC_REST_CRUD_Controller builds them."""
    pages = math.ceil(total / per_page) if per_page else 0
    headers = [("X-WP-Total", str(total)), ("X-WP-TotalPages", str(pages))]
    items = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
    base = str(request.url.replace(query=""))

    def link(to: int) -> str:
        return f"{base}?{urlencode([*items, ('page', str(to))])}"

    if page > 1:
        headers.append(("Link", f'<{link(min(page - 1, pages))}>; rel="prev"'))
    if pages > page:
        headers.append(("Link", f'<{link(page + 1)}>; rel="next"'))
    return headers


def only_fields(record: dict[str, Any], fields: str | None) -> dict[str, Any]:
    """WordPress's global ``_fields`` parameter (top-level names only)."""
    if not fields:
        return record
    wanted = {f.strip().split(".")[0] for f in fields.split(",") if f.strip()}
    return {k: v for k, v in record.items() if k in wanted}
