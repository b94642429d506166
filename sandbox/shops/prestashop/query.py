"""List parameters as WebserviceRequest reads them: ``language``, ``filter[field]`` with
every operator of getSQLRetrieveFilter, ``display``, ``sort``, ``limit`` and the ``date=1``
gate on date fields, with PrestaShop's error codes and messages; then the selection itself.

Filters and sorts on ids, dates and the foreign keys in fields.INDEX read the compact rows;
any other field builds the records (slower, as a full table scan is on a real shop).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from sandbox.shops.prestashop.data import Row
from sandbox.shops.prestashop.errors import PSError, did_you_mean
from sandbox.shops.prestashop.fields import DATED, DYNAMIC, I18N, INDEX, fields_of
from sandbox.shops.prestashop.records import I18n
from sandbox.shops.prestashop.store import Store
from sandbox.shops.table import every, like, window

_FILTER = re.compile(r"^filter\[([^\]]*)\](.*)$")
_OPERATOR = re.compile(r"^(.*)\[(.*)\](.*)$", re.DOTALL)
_RANGE = re.compile(r"^([\d.:\-\s]+),([\d.:\-\s]+)$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_DATE_FIELDS = ("date_add", "date_upd")
Check = Callable[[Any], bool]


@dataclass
class Query:
    display: str | list[str] = "minimum"
    filters: list[tuple[str, str]] = field(default_factory=list)
    sort: list[tuple[str, bool]] = field(default_factory=list)  # (field, descending)
    limit: tuple[int, int | None] | None = None
    date: bool = False


def languages_of(store: Store, raw: str | None) -> list[int]:
    """WebserviceRequest::filterLanguage: ``1``, ``[1|2]`` or a range ``[1,3]``; unknown ids
    are dropped; none left is an error. Without the parameter: the active languages."""
    table = store.tables["languages"]
    if raw is None:
        return [r.id for r in table.rows.values() if store.record("languages", r)["active"]]
    if raw.isdigit():
        wanted = [raw]
    elif raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1]
        if ("|" in inner) != ("," in inner):
            if "|" in inner:
                wanted = inner.split("|")
            else:
                bounds = inner.split(",")
                if len(bounds) != 2:
                    raise PSError(400, 78, "A range value for a language must contains only 2 values")
                if not all(b.isdigit() for b in bounds):
                    raise PSError(400, 80, "Language ID must be numeric")
                wanted = [str(i) for i in range(int(bounds[0]), int(bounds[1]) + 1)]
        else:
            wanted = re.findall(r"\[(\d)+\]", raw)[:1]
    else:
        raise PSError(400, 79, "language value is wrong")
    if not all(w.isdigit() for w in wanted):
        raise PSError(400, 80, "Language ID must be numeric")
    found = [int(w) for w in wanted if int(w) in table.rows]
    if not found:
        raise PSError(400, 81, "language is not available")
    return found


def parse(resource: str, params: Mapping[str, str], version: str) -> Query:
    """The list parameters, checked in manageFilters' order (filters, display, sort, limit)."""
    query = Query(date=params.get("date", "") not in ("", "0"))
    fields = fields_of(resource, version)
    i18n = I18N.get(resource, frozenset())
    available = [f for f in fields if f not in i18n and (query.date or f not in _DATE_FIELDS)]
    if query.date:
        available += [f for f in _DATE_FIELDS if f not in available]
    for key, value in params.items():
        match = _FILTER.match(key)
        if not match or match.group(1) in ("sort", "limit"):
            continue
        name, nested = match.groups()
        if name not in available and name not in i18n:
            if nested:
                raise PSError(400, 31, "There is no existing linked table for this resource")
            raise did_you_mean(400, 32, "This filter does not exist", name, available)
        if value == "":
            raise PSError(400, 33, f'The filter "{name}" is malformed.')
        if name in DYNAMIC.get(resource, ()):
            raise PSError(400, 34, f'The field "{name}" is dynamic. It is not possible to filter'
                                   " GET query with this field.")
        query.filters.append((name, value))
    query.display = _display(params.get("display"), fields)
    if "sort" in params:
        query.sort = _sort(params["sort"], available, i18n)
    if "limit" in params:
        parts = params["limit"].split(",")
        if len(parts) > 2:
            raise PSError(400, 39, 'The "limit" value has to be formed as this example: "5,25"'
                                   ' or "10"')
        numbers = [_php_int(p) for p in parts]
        query.limit = (0, numbers[0]) if len(numbers) == 1 else (numbers[0], numbers[1])
    return query


def _php_int(text: str) -> int:
    match = re.match(r"^\s*-?\d+", text)
    return int(match.group()) if match else 0


def _display(raw: str | None, fields: tuple[str, ...]) -> str | list[str]:
    if raw is None or raw in ("full", "minimum"):
        return raw or "minimum"
    match = re.match(r"^\[(.*)\]$", raw)
    if not match:
        raise PSError(400, 36, "The 'display' syntax is wrong. You can set 'full' or"
                               " '[field_1,field_2,field_3,...]'. These are available: "
                      + ", ".join(fields))
    wanted = [part.strip() for part in match.group(1).split(",") if part.strip()]
    for name in wanted:
        if name not in fields:
            raise PSError(400, 35, f'Unable to display this field "{name}". However, these are'
                                   " available: " + ", ".join(fields))
    return wanted


def _sort(raw: str, available: list[str], i18n: frozenset[str]) -> list[tuple[str, bool]]:
    match = re.match(r"^\[(.*)\]$", raw)
    out = []
    for part in (match.group(1).split(",") if match else [raw]):
        name, _, direction = part.rpartition("_")
        if not name or direction.upper() not in ("ASC", "DESC"):
            raise PSError(400, 37, 'The "sort" value has to be formed as this example:'
                                   ' "field_ASC" or \'[field_1_DESC,field_2_ASC,field_3_ASC,'
                                   '...]\' ("field" has to be an available field)')
        if name not in available and name not in i18n:
            raise PSError(400, 38, "Unable to filter by this field. However, these are available: "
                          + ", ".join(available) + ", for i18n fields:" + ", ".join(sorted(i18n)))
        out.append((name, direction.upper() == "DESC"))
    return out


# comparisons ---------------------------------------------------------------------------

def _comparable(cell: Any, value: str, is_date: bool) -> tuple[Any, Any]:
    if isinstance(cell, bool):
        cell = int(cell)
    if cell is None:
        cell = ""
    if is_date:
        value = value.strip()
        return cell, value + " 00:00:00" if len(value) == 10 else value
    numeric = isinstance(cell, int | float) or (isinstance(cell, str) and _NUMBER.match(cell))
    if numeric and _NUMBER.match(value.strip()):
        return float(cell), float(value)
    return str(cell).casefold(), value.casefold()


def condition(raw: str, is_date: bool) -> Check | None:
    """getSQLRetrieveFilter as a predicate on one cell (None: no condition, as for an
    operator PrestaShop does not know, like ``>=[…]``)."""

    def cmp(cell: Any, value: str) -> int:
        a, b = _comparable(cell, value, is_date)
        return (a > b) - (a < b)

    match = _OPERATOR.match(raw)
    if not match:
        return lambda cell: cmp(cell, raw) == 0
    before, inner, after = match.groups()
    if before == "%" or after == "%":
        pattern = like(before + inner + after)
        return lambda cell: bool(pattern.match("" if cell is None else str(cell)))
    if before == "" and after == "":
        if inner.find("|") > 0:
            values = inner.split("|")
            return lambda cell: any(cmp(cell, v) == 0 for v in values)
        bounds = _RANGE.match(inner)
        if bounds:  # in either order: numbers as numbers, other values as text
            numeric = all(_NUMBER.match(v.strip()) for v in bounds.groups())
            low, high = sorted(bounds.groups(), key=float if numeric else None)
            return lambda cell: cmp(cell, low) >= 0 and cmp(cell, high) <= 0
        return lambda cell: cmp(cell, inner) == 0
    if before == ">":
        return lambda cell: cmp(cell, inner) > 0
    if before == "<":
        return lambda cell: cmp(cell, inner) < 0
    if before == "!":
        values = inner.split("|")
        return lambda cell: all(cmp(cell, v) != 0 for v in values)
    return None


# selection ------------------------------------------------------------------------------

class Cells:
    """A field's value for a row: from the row when the fake indexes it, else from the
    built record (built once per request)."""

    def __init__(self, store: Store, resource: str) -> None:
        self.store, self.resource = store, resource
        self.index = INDEX.get(resource, {})
        self.built: dict[int, dict[str, Any]] = {}

    def record(self, row: Row) -> dict[str, Any]:
        if row.id not in self.built:
            self.built[row.id] = self.store.record(self.resource, row)
        return self.built[row.id]

    def __call__(self, row: Row, name: str) -> Any:
        if name == "id":
            return row.id
        if name == "date_upd":
            return self.store.local_text(row.modified)
        if name == "date_add":
            return self.store.local_text(row.created)
        if name in self.index:
            return getattr(row, self.index[name])
        return self.record(row).get(name)


def _candidates(store: Store, resource: str, query: Query) -> tuple[Iterable[Row], str]:
    """The rows worth testing and the order they come in ("id", "upd" or "second": one
    second of date_upd), read lazily: a page stops reading once full, so it costs the same
    in a large shop as in a small one."""
    rows = store.tables[resource].rows
    # the filters written with an operator: (name, before, inside the brackets, after)
    ops = [(name, *m.groups()) for name, raw in query.filters if (m := _OPERATOR.match(raw))]
    for name, before, inner, after in ops:
        if name == "id" and not before and not after and not _RANGE.match(inner):
            ids = sorted({int(v) for v in inner.split("|") if v.strip().isdigit()})
            return [rows[i] for i in ids if i in rows], "id"
    for name, before, inner, after in ops:
        if name == "date_upd" and not after:
            ordered, keys = store.tables[resource].where(
                "upd", "", None, lambda r: store.local_text(r.modified))
            bounds = _RANGE.match(inner)
            if before == "" and bounds:
                start, stop = window(keys, *sorted(_full(v) for v in bounds.groups()),
                                     inclusive=True)
                # one second (the walk of a tie): its rows are in id order too, and those
                # at or below an ``id`` lower bound (``filter[id]=>[N]``) are skipped unread
                floor = max((int(i) for n, b, i, a in ops
                             if n == "id" and b == ">" and not a and i.isdigit()), default=None)
                if start < stop and keys[start] == keys[stop - 1]:
                    if floor is not None:
                        start = bisect_right(ordered, floor, start, stop, key=lambda r: r.id)
                    return _run(ordered, start, stop), "second"
                return _run(ordered, start, stop), "upd"
            if before == ">":
                return _run(ordered, *window(keys, above=_full(inner))), "upd"
            if before == "<":
                return _run(ordered, *window(keys, below=_full(inner))), "upd"
    return rows.values(), "id"


def _run(rows: list[Row], start: int, stop: int) -> Iterator[Row]:
    """``rows[start:stop]`` one by one, without copying them."""
    return map(rows.__getitem__, range(start, stop))


def _full(value: str) -> str:
    value = value.strip()
    return value + " 00:00:00" if len(value) == 10 else value


def _row_check(cells: Cells, name: str, check: Check,
               languages: list[int] | None) -> Callable[[Row], bool]:
    """``check`` on a row's field (a multilingual one matches in any language read)."""
    if languages is None:
        return lambda row: check(cells(row, name))
    return lambda row: any(check(cells(row, name).get(lang, "")) for lang in languages)


_BY_ID = [("id", False)]
_BY_UPD = [("date_upd", False), ("id", False)]
#: the sorts the candidates of each order already come in ("second": one date_upd second)
_NATURAL = {"id": [_BY_ID], "upd": [_BY_UPD, _BY_UPD[:1]],
            "second": [_BY_ID, _BY_UPD, _BY_UPD[:1]]}


def select(store: Store, resource: str, query: Query, languages: list[int]) -> tuple[list[Row], Cells]:
    """The rows of the requested page, in the requested order."""
    dated = resource in DATED
    names = [n for n, _ in query.filters] + [n for n, _ in query.sort]
    if not dated and any(n in _DATE_FIELDS for n in names):
        column = next(n for n in names if n in _DATE_FIELDS)
        raise PSError(500, 3, f"[PHP Warning #2] Unknown column 'main.{column}' in 'where clause'")
    cells = Cells(store, resource)
    i18n = I18N.get(resource, frozenset())
    checks: list[Callable[[Row], bool]] = []
    for name, raw in query.filters:
        check = condition(raw, name in _DATE_FIELDS)
        if check is None:
            continue
        checks.append(_row_check(cells, name, check, languages if name in i18n else None))
    candidates, order = _candidates(store, resource, query)
    matched = filter(every(checks), candidates)
    wanted = query.sort or [("id", False)]
    offset, count = query.limit or (0, None)
    stop = None if count is None else offset + max(count, 0)
    if wanted in _NATURAL[order]:
        return list(islice(matched, offset, stop)), cells
    rows = list(matched)
    for name, descending in reversed(wanted):
        def key(r: Row, n: str = name) -> Any:
            value = cells(r, n)
            if isinstance(value, I18n):
                value = value.get(languages[0], "")
            if isinstance(value, bool | int | float):
                return (0, float(value), "")
            return (1, 0.0, str(value or "").casefold() if n not in _DATE_FIELDS else str(value))
        rows.sort(key=key, reverse=descending)
    return rows[offset:stop], cells
