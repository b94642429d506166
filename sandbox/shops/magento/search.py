"""``searchCriteria`` as Magento's repositories read it: filter groups (filters inside a group
are ORed, groups are ANDed), every condition type, sort orders, page size and current page,
and the ``fields`` parameter that trims the answer.

Choices (see README.md): string comparisons ignore case, as MySQL's default collation does;
``from``/``to`` are ``>=``/``<=`` each on their own (a range needs two groups); a page past the
end answers the last page again (Magento 2.0–2.3) or no items (2.4), per the settings; with
the input limits on, a pageSize over the maximum is refused and a missing one means 20.
"""

from __future__ import annotations

import math
import operator
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.shops.magento.data import Row
from sandbox.shops.magento.errors import MagentoError, required, unknown_column
from sandbox.shops.magento.records import increment_id, utc_text
from sandbox.shops.magento.store import parse_time
from sandbox.shops.table import Span, either, every, like, window

Getter = Callable[[Row], Any]
Predicate = Callable[[Row], bool]
CONDITIONS = frozenset({"eq", "finset", "from", "gt", "gteq", "in", "like", "lt", "lteq",
                        "moreq", "neq", "nfinset", "nin", "nlike", "notnull", "null", "to"})

#: the conditions that bound a value from below
_LOWER = ("gt", "gteq", "moreq", "from")
#: the comparisons of the conditions that compare a value
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "neq": operator.ne, "gt": operator.gt, "gteq": operator.ge,
    "moreq": operator.ge, "from": operator.ge, "lt": operator.lt, "lteq": operator.le,
    "to": operator.le}

_ID: tuple[str, Getter] = ("int", lambda r: r.id)
_CREATED: tuple[str, Getter] = ("date", lambda r: r.created)
_UPDATED: tuple[str, Getter] = ("date", lambda r: r.updated)
#: the columns each collection can filter and sort on: (type, getter on the row)
COLUMNS: dict[str, dict[str, tuple[str, Getter]]] = {
    "orders": {"entity_id": _ID, "created_at": _CREATED, "updated_at": _UPDATED,
               "increment_id": ("str", lambda r: increment_id(r.id)),
               "status": ("str", lambda r: r.status), "state": ("str", lambda r: r.state),
               "customer_id": ("int", lambda r: r.customer or None),
               "customer_is_guest": ("int", lambda r: 0 if r.customer else 1),
               "store_id": ("int", lambda r: 1)},
    "customers": {"entity_id": _ID, "id": _ID, "created_at": _CREATED, "updated_at": _UPDATED,
                  "email": ("str", lambda r: r.sku), "website_id": ("int", lambda r: 1),
                  "store_id": ("int", lambda r: 1)},
    "products": {"entity_id": _ID, "id": _ID, "created_at": _CREATED, "updated_at": _UPDATED,
                 "sku": ("str", lambda r: r.sku), "name": ("str", lambda r: r.name),
                 "type_id": ("str", lambda r: r.kind),
                 "status": ("int", lambda r: 1 if r.active else 2),
                 "visibility": ("int", lambda r: 1 if r.parent else 4)},
    "carts": {"entity_id": _ID, "id": _ID, "created_at": _CREATED, "updated_at": _UPDATED,
              "is_active": ("int", lambda r: int(r.active)),
              "customer_id": ("int", lambda r: r.customer or None),
              "items_count": ("int", lambda r: r.count),
              "reserved_order_id": ("str", lambda r: increment_id(r.order) if r.order else None),
              "store_id": ("int", lambda r: 1)},
    "categories": {"entity_id": _ID, "id": _ID, "created_at": _CREATED, "updated_at": _UPDATED,
                   "parent_id": ("int", lambda r: r.parent), "name": ("str", lambda r: r.name),
                   "is_active": ("int", lambda r: int(r.active))},
}


@dataclass(frozen=True)
class Filter:
    field: str
    value: str
    condition: str


@dataclass
class Criteria:
    groups: list[list[Filter]]
    sort: list[tuple[str, str]]
    page_size: int | None
    current_page: int | None

    def echo(self) -> dict[str, Any]:
        """The ``search_criteria`` Magento sends back (page_size only when it was given,
        as 2.4.4+ does)."""
        out: dict[str, Any] = {"filter_groups": [
            {"filters": [{"field": f.field, "value": f.value, "condition_type": f.condition}
                         for f in group]} for group in self.groups]}
        if self.sort:
            out["sort_orders"] = [{"field": f, "direction": d} for f, d in self.sort]
        if self.page_size is not None:
            out["page_size"] = self.page_size
        if self.current_page is not None:
            out["current_page"] = self.current_page
        return out


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _listed(value: Any) -> list[Any]:
    """qs decodes ``a[0]``… as a list, and sparse or large indices as a dict."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=lambda k: int(k) if str(k).isdigit() else 0)]
    return []


def _int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value))
    except ValueError:
        raise MagentoError(400, 'The "%value" value\'s type is invalid. The "%type" type was'
                                ' expected. Verify and try again.',
                           {"value": value, "type": "int"}) from None


def parse(query: dict[str, Any], *, required_criteria: bool) -> Criteria:
    """The searchCriteria of a decoded query string (camelCase and snake_case keys alike)."""
    raw = query.get("searchCriteria", query.get("search_criteria"))
    if raw is None:  # ``?searchCriteria`` alone (empty) is enough: it means "everything"
        if required_criteria:
            raise required("searchCriteria")
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    crit = {_snake(str(k)): v for k, v in raw.items()}
    groups = []
    for group in _listed(crit.get("filter_groups")):
        filters = []
        for item in _listed(group.get("filters") if isinstance(group, dict) else None):
            if not isinstance(item, dict):
                continue
            item = {_snake(str(k)): v for k, v in item.items()}
            condition = str(item.get("condition_type") or "eq").lower()
            if condition not in CONDITIONS:
                raise MagentoError(400, "Invalid condition type: %1", [condition])
            filters.append(Filter(str(item.get("field", "")), str(item.get("value", "")), condition))
        if filters:
            groups.append(filters)
    sort = []
    for item in _listed(crit.get("sort_orders")):
        if isinstance(item, dict) and item.get("field"):
            direction = str(item.get("direction") or "ASC").upper()
            sort.append((str(item["field"]), "DESC" if direction == "DESC" else "ASC"))
    return Criteria(groups, sort, _int(crit.get("page_size")), _int(crit.get("current_page")))


def _typed(kind: str, text: str) -> Any:
    if kind == "date":
        return parse_time(text)
    if kind == "int":
        try:
            return int(float(text)) if text.strip() not in ("true", "false") else int(text == "true")
        except ValueError:
            return None
    return text.casefold()


#: the negated conditions, by the condition they negate (MySQL: NULL never matches either)
_NEGATED = {"notnull": "null", "nin": "in", "nlike": "like", "nfinset": "finset"}


def _condition(kind: str, getter: Getter, f: Filter) -> Predicate:
    """One filter as a predicate on rows (MySQL semantics: NULL never compares true)."""
    c = f.condition
    if c in _NEGATED:
        positive = _condition(kind, getter, Filter(f.field, f.value, _NEGATED[c]))
        return lambda r: getter(r) is not None and not positive(r)
    if c == "null":
        return lambda r: getter(r) is None
    if c == "in":
        wanted = {_typed(kind, v) for v in f.value.split(",")}
        return lambda r: _norm(kind, getter(r)) in wanted
    if c == "like":
        regex = like(f.value)
        return lambda r: getter(r) is not None and bool(regex.match(str(getter(r))))
    if c == "finset":
        return lambda r: (got := getter(r)) is not None and f.value in str(got).split(",")
    value = _typed(kind, f.value)
    compare = _COMPARE[c]

    def check(r: Row) -> bool:
        got = getter(r)
        return got is not None and value is not None and compare(_norm(kind, got), value)
    return check


def _norm(kind: str, value: Any) -> Any:
    return value.casefold() if kind == "str" and isinstance(value, str) else value


def column(resource: str, field: str, clause: str = "where clause") -> tuple[str, Getter]:
    try:
        return COLUMNS[resource][field]
    except KeyError:
        raise unknown_column(field, clause) from None


def predicate(resource: str, groups: list[list[Filter]]) -> Predicate | None:
    """The filters ORed in each group, the groups ANDed (None: no filter)."""
    compiled = [either([_condition(*column(resource, f.field), f) for f in group])
                for group in groups]
    return every(compiled) if compiled else None


def _lower_bound(resource: str, groups: list[list[Filter]], field: str) -> int | None:
    """The smallest ``field`` value a row can have to match: from groups holding a single
    ``>``/``>=`` filter on it (so that the scan can start there)."""
    kind, _ = column(resource, field)
    return max((value for group in groups if len(group) == 1 for f in group
                if f.field == field and f.condition in (*_LOWER, "eq")
                and isinstance(value := _typed(kind, f.value), int)), default=None)


def _sort_key(kind: str, getter: Getter) -> Callable[[Row], tuple[bool, Any]]:
    """MySQL's order: NULL before any value."""
    def key(row: Row) -> tuple[bool, Any]:
        value = getter(row)
        return (value is not None, _norm(kind, value) if value is not None else 0)
    return key


def select(table: Any, resource: str, crit: Criteria, *, past_end: str,
           max_page_size: int | None) -> tuple[list[Row], int, int]:
    """The rows of the requested page, the total count, and the page actually served."""
    size = crit.page_size
    if max_page_size is not None:
        if size is not None and size > max_page_size:
            raise MagentoError(400, "Maximum SearchCriteria pageSize is %max",
                               {"max": max_page_size})
        size = size or 20
    check = predicate(resource, crit.groups)
    sort = [(("id" if f == "entity_id" else f), d) for f, d in crit.sort]
    if sort in ([], [("id", "ASC")]):
        field = "entity_id" if resource == "orders" or _lower_bound(
            resource, crit.groups, "id") is None else "id"
        matched = _sorted_span(table, resource, crit.groups, check, "id", field)
    elif sort in ([("updated_at", "ASC")], [("updated_at", "ASC"), ("id", "ASC")]):
        matched = _sorted_span(table, resource, crit.groups, check, "updated", "updated_at")
    else:
        rows = list(table.ordered("id"))
        for field, direction in reversed(sort):
            kind, getter = column(resource, "entity_id" if field == "id" and resource == "orders"
                                  else field, "order clause")
            rows.sort(key=_sort_key(kind, getter), reverse=direction == "DESC")
        matched = Span([r for r in rows if check(r)] if check else rows)
    total = len(matched)
    if not size:  # none, or 0: Magento's collection then applies no limit
        return matched.page(0, total), total, 1
    page = max(1, crit.current_page or 1)
    last = max(1, math.ceil(total / size))
    if page > last and past_end == "last":
        page = last  # the collection clamps curPage: the last page again (2.0–2.3)
    return matched.page((page - 1) * size, size), total, page


def _sorted_span(table: Any, resource: str, groups: list[list[Filter]],
                 check: Predicate | None, by: str, field: str) -> Span[Row]:
    """The rows matching ``groups`` in the table's ``by`` order (``field`` its column):
    those before the first row from which every group holds are tested one by one, the
    rest are counted and cut without being looked at, up to where an upper bound on
    ``field`` ends them (a keyset cursor's hot path, up to a settled second)."""
    rows, keys = table.ordered(by), table.keys(by)
    low = _lower_bound(resource, groups, field)
    start = bisect_left(keys, low) if low is not None else 0
    if check is None:
        return Span(rows, start)
    run = _all_within(resource, groups, field, keys)
    if run is None:
        return Span([r for r in rows[start:] if check(r)])
    every, stop = max(run[0], start), run[1]
    head = rows[start:min(every, stop)]
    cut = _tie_cut(resource, groups, field, head)
    return Span(rows, every, stop, head=[r for r in head if check(r)] if cut is None
                else head[cut:])


def _all_within(resource: str, groups: list[list[Filter]], field: str,
                keys: list[Any]) -> tuple[int, int] | None:
    """The run ``[start, stop)`` of the rows sorted on ``field`` (``keys`` its values) in
    which every row matches, past which none does: each group must hold lower bounds on
    ``field`` (``>``, ``>=``: true from their bisect on) or be one upper bound (``<``,
    ``<=``: true up to its bisect, false after); None when a group does neither."""
    kind, _ = column(resource, field)
    start, stop = 0, len(keys)
    for group in groups:
        typed = [(f.condition, value) for f in group
                 if f.field == field and isinstance(value := _typed(kind, f.value), int)]
        lower = [window(keys, v, inclusive=c != "gt")[0] for c, v in typed if c in _LOWER]
        upper = [window(keys, below=v, inclusive=c != "lt")[1] for c, v in typed
                 if c in ("lt", "lteq", "to") and len(group) == 1]
        if lower:
            start = max(start, min(lower))
        elif upper:
            stop = min(stop, upper[0])
        else:
            return None
    return start, stop


def _tie_cut(resource: str, groups: list[list[Filter]], field: str,
             head: list[Row]) -> int | None:
    """Where the rows of ``head``, sharing one ``field`` value (so in id order: a keyset
    cursor inside a second), start matching: each group holds for that value or from an id
    lower bound on (``entity_id > I``); None when one depends on more (test each row)."""
    kind, getter = column(resource, field)
    if not head or getter(head[0]) != getter(head[-1]) or not all(
            f.field == field or COLUMNS[resource].get(f.field) is _ID for g in groups for f in g):
        return None if head else 0
    cut = 0
    for group in groups:
        if any(_condition(kind, getter, f)(head[0]) for f in group if f.field == field):
            continue
        # ``entity_id > I`` (or >=) bounds: the rows from the first id past the lowest match
        ids = [(f.condition, _typed("int", f.value)) for f in group if f.field != field]
        if any(c not in _LOWER or not isinstance(v, int) for c, v in ids):
            return None
        if not ids:
            return len(head)
        cut = max(cut, bisect_left(head, min(v + (c == "gt") for c, v in ids),
                                   key=lambda r: r.id))
    return cut


def parse_fields(text: str) -> dict[str, Any]:
    """``items[id,sku,extension_attributes[stock_item[qty]]],total_count`` as a tree."""
    tree: dict[str, Any] = {}
    stack = [tree]
    parts = re.split(r"([\[\],])", text)  # names, each followed by its delimiter
    for raw, delimiter in zip(parts[::2], [*parts[1::2], ""], strict=True):
        name = raw.strip()
        if delimiter == "[":
            child: dict[str, Any] = {}
            stack[-1][name] = child
            stack.append(child)
        elif name:
            stack[-1][name] = None
        if delimiter == "]" and len(stack) > 1:
            stack.pop()
    return tree


def trim(value: Any, spec: dict[str, Any] | None) -> Any:
    """Keep what ``spec`` names (lists are trimmed item by item)."""
    if spec is None:
        return value
    if isinstance(value, list):
        return [trim(v, spec) for v in value]
    if isinstance(value, dict):
        return {k: trim(value[k], sub) for k, sub in spec.items() if k in value}
    return value


#: item fields a row answers without building the record (the ids scans' hot path)
LIGHT = {"entity_id": lambda r: r.id, "id": lambda r: r.id,
         "updated_at": lambda r: utc_text(r.updated), "created_at": lambda r: utc_text(r.created)}


def light_item(resource: str, spec: dict[str, Any] | None, row: Row) -> dict[str, Any] | None:
    """The trimmed item straight from the row, when ``spec`` asks only for its id and dates."""
    own_id = "entity_id" if resource == "orders" else "id"
    allowed = {own_id, "created_at", "updated_at"}
    if not spec or any(sub is not None or key not in allowed for key, sub in spec.items()):
        return None
    return {key: LIGHT[key](row) for key in spec}
