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
import operator
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from sandbox.shops.people import slugify
from sandbox.shops.table import Span, every, window
from sandbox.shops.woocommerce.data import Row
from sandbox.shops.woocommerce.records import product_category
from sandbox.shops.woocommerce.store import Store

Predicate = Callable[[Row], bool]
Compare = Callable[[int, int], bool]


def _date_bounds(store: Store, params: dict[str, Any], sliced: bool) -> list[Predicate]:
    gmt = bool(params.get("dates_are_gmt"))
    checks: list[Predicate] = []
    bounds = [("after", "created", operator.gt), ("before", "created", operator.lt)]
    if not sliced:
        bounds += [("modified_after", "modified", operator.gt),
                   ("modified_before", "modified", operator.lt)]
    for name, column, compare in bounds:
        value = _moment(store, params.get(name))
        if value is None:
            continue

        def check(r: Row, c: str = column, v: int = value, cmp: Compare = compare) -> bool:
            return cmp(getattr(r, c) if gmt else store.local(getattr(r, c)), v)

        checks.append(check)
    return checks


def _moment(store: Store, given: tuple[int, bool] | None) -> int | None:
    """A date parameter's value (None: not given), a zoned one rendered in site time as
    WP_Date_Query does."""
    if given is None:
        return None
    value, zoned = given
    return store.local(value) if zoned else value


def _status(resource: str, params: dict[str, Any]) -> Predicate | None:
    """The resource's status filter: it depends on ``status`` alone, so the rows it keeps
    are a view of the table (``Table.where``)."""
    if resource not in ("orders", "products", "variations", "coupons"):
        return None
    # an order's status is a list, a product's one value; coupons have none to ask for
    wanted = set(params["status"]) if resource == "orders" else {params.get("status", "any")}
    if "any" in wanted:  # 'any' short-circuits the list, and never includes trash
        hidden = ("trash", "checkout-draft") if resource == "orders" else ("trash",)
        return lambda r: r.status not in hidden
    return lambda r: r.status in wanted


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
    after, before = (_moment(store, params.get(n)) for n in ("modified_after", "modified_before"))
    bounded = after is not None or before is not None
    sliced = gmt and (orderby == "modified" or (orderby == "id" and bounded))
    by = "modified" if sliced else {"date": "created", "registered_date": "created",
                                    "modified": "modified"}.get(orderby, "id")
    status = _status(resource, params)
    checks = _filters(store, resource, params, sliced)
    if within is not None:
        rows = sorted(within, key=table.sort_keys[by])
        keys = [getattr(r, by) for r in rows]
        checks += [status] if status else []
    else:
        rows, keys = table.where(by, f"status={params.get('status')!r}", status)
    # the GMT modified window (the hot path of incremental readers) is cut by bisect
    low, high = window(keys, after, before) if sliced else (0, len(rows))
    matched = Span(rows, low, high)
    if checks:
        check = every(checks)
        matched = Span([r for r in rows[low:high] if check(r)])
    # rows of a window that changed in one second are in id order too; others are sorted
    if sliced and orderby == "id" and high - low >= 2 and keys[low] != keys[high - 1]:
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
