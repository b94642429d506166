"""The sandbox's listing engine: parse listing parameters, filter, sort, paginate, project.

Pure Python, no HTTP framework: the HTTP layer decodes the raw query string with
``qs_codec.decode(query, DecodeOptions(list_limit=1000, ...))`` (a port of Node's ``qs``,
which the real Express/NestJS service uses; see ``sandbox.marketing.http.QS_OPTIONS``) and
hands the result to :func:`parse_list_query`, or the ``settings`` / ``fields`` parameters
to :func:`parse_event_settings`. Indices qs leaves as dict keys (sparse, or past
``list_limit``) are put back in order here.

Accepted encodings of ``filters``, ``orFilters`` and ``order``: one JSON object per repeated
parameter, a JSON array in one parameter, or bracket notation (``filters[0][field]=..``).
Different parameters may use different encodings; within one parameter qs itself cannot
merge a JSON occurrence with bracket ones reliably. ``values`` may be a scalar, an array,
or a comma-separated string (split only for IN/NOT_IN/BETWEEN/NOT_BETWEEN, so a single
value may contain commas); ``value`` is accepted in place of ``values``. Every problem is
collected and raised as one ``ApiError(400, [...])``.

Filter semantics (record value ``r``, filter values ``v``):

* each ``v`` is coerced to the type of ``r``: booleans from ``true``/``false``/``1``/``0``,
  numbers from numeric strings (so ``"9" < "10"`` is numeric when ``r`` is a number),
  datetimes when both ``r`` and ``v`` are ISO 8601 timestamps (a missing offset means UTC);
  when no coercion applies both sides are compared as strings (JSON spelling: ``true``,
  ``5``, ``2.5``).
* EQUALS and ordering comparisons on strings are case-sensitive; CONTAINS, NOT_CONTAINS,
  STARTS_WITH, ENDS_WITH and LIKE are case-insensitive substring/pattern matches. LIKE uses
  SQL wildcards ``%`` and ``_``; a backslash escapes them. BETWEEN is inclusive.
* ``r`` null (or absent) matches only EQUALS/IN with a null value (JSON ``null`` or the
  string ``"null"``), and NOT_EQUALS/NOT_IN without one (SQL-like: it never satisfies a
  comparison, a pattern or a range, negated or not).
* ``r`` a list (``group_ids``, ``category_ids``): the positive operators match when any
  element matches; NOT_EQUALS, NOT_IN, NOT_CONTAINS and NOT_BETWEEN match when no element
  matches the positive counterpart.

Sorting is stable and total over mixed values: nulls, booleans, numbers, timestamps (by
instant, whatever their spelling), then text by code point; ``desc`` reverses it all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from difflib import get_close_matches
from typing import Any

from connectors.marketing.query import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MULTI_VALUE_OPERATORS,
    Filter,
    Operator,
    OrderBy,
)
from sandbox.marketing.errors import ApiError

__all__ = [
    "ListQuery",
    "apply_list_query",
    "list_envelope",
    "parse_event_settings",
    "parse_list_query",
    "record_filter",
]

EVENT_SETTINGS_KEYS = ("limit", "offset", "order", "filter")
_VALID_OPERATORS = ", ".join(Operator)
_NULL_AWARE = {Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN}
_INT_RE = re.compile(r"[+-]?\d+")
_FLOAT_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

Record = Mapping[str, Any]
Predicate = Callable[[Any], bool]


@dataclass
class ListQuery:
    """A validated listing request: what to keep, in which order, which page, which fields."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0
    fields: list[str] | None = None
    order: list[OrderBy] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    or_filters: list[Filter] = field(default_factory=list)


class _Parser:
    """Collects every problem of one request so the client sees them all at once."""

    def __init__(self, allowed_fields: Sequence[str]) -> None:
        self.allowed = list(allowed_fields)
        self.allowed_set = frozenset(allowed_fields)
        self.problems: list[str] = []

    def fail(self) -> None:
        if self.problems:
            raise ApiError(400, self.problems)

    def integer(self, raw: Any, name: str, default: int, low: int, high: int | None) -> int:
        bounds = f"between {low} and {high}" if high is not None else f">= {low}"
        if raw is None:
            return default
        value: int | None = None
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and _INT_RE.fullmatch(raw.strip()):
            value = int(raw.strip())
        if value is None or value < low or (high is not None and value > high):
            self.problems.append(f"{name} must be an integer {bounds}, got {_show(raw)}")
            return default
        return value

    def field_name(self, raw: Any, where: str) -> str | None:
        if raw is None or raw == "":
            self.problems.append(f"{where}: missing field")
            return None
        if not isinstance(raw, str):
            self.problems.append(f"{where}: field must be a single string, got {_show(raw)}")
            return None
        if raw not in self.allowed_set:
            close = get_close_matches(raw, self.allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.problems.append(
                f"{where}: unknown field {raw!r}{hint}; allowed fields: {', '.join(self.allowed)}"
            )
            return None
        return raw

    def fields(self, raw: Any, where: str = "fields") -> list[str] | None:
        if raw is None:
            return None
        items = _as_list(raw)
        if items is None or not all(isinstance(i, str) for i in items):
            self.problems.append(f"{where} must be field names, comma-separated or repeated")
            return None
        names = [p.strip() for item in items for p in item.split(",") if p.strip()]
        good = [self.field_name(n, where) for n in dict.fromkeys(names)]
        return [n for n in good if n is not None] or None

    def criteria(self, raw: Any, where: str) -> list[tuple[str, Mapping[str, Any] | None]]:
        """Flatten every encoding of ``order``/``filters`` into labelled objects.

        A criterion already reported as unreadable is kept as None so that the labels of
        the following ones still match their positions.
        """
        found: list[tuple[str, Mapping[str, Any] | None]] = []

        def add(item: Any, from_json: bool) -> None:
            label = f"{where}[{len(found)}]"
            if isinstance(item, str) and not from_json and not item.strip():
                return  # `filters=` with nothing in it: no criterion
            if isinstance(item, str) and not from_json:
                try:
                    decoded = json.loads(item)
                except ValueError as exc:
                    self.problems.append(
                        f"{label}: malformed JSON ({exc}); expected an object like "
                        '{"field": "...", ...} or bracket notation'
                    )
                    found.append((label, None))
                    return
                for element in decoded if isinstance(decoded, list) else [decoded]:
                    add(element, True)
            elif isinstance(item, Mapping) and not _is_index_map(item):
                found.append((label, item))
            else:
                self.problems.append(f"{label}: expected an object, got {_show(item)}")
                found.append((label, None))

        if raw is None:
            return found
        items = _as_list(raw)
        if items is None:  # a plain object: bracket notation without indices
            items = [raw]
        for item in items:
            add(item, False)
        return found

    def orders(self, raw: Any, where: str) -> list[OrderBy]:
        result: list[OrderBy] = []
        for label, crit in self.criteria(raw, where):
            if crit is None:
                continue
            name = self.field_name(crit.get("field"), label)
            kind = crit.get("type")
            if kind not in ("asc", "desc"):
                got = "missing" if kind is None else f"got {_show(kind)}"
                self.problems.append(f"{label}: type must be 'asc' or 'desc' (lowercase), {got}")
            elif name is not None:
                result.append(OrderBy(field=name, type=kind))
        return result

    def filters(self, raw: Any, where: str) -> list[Filter]:
        result: list[Filter] = []
        for label, crit in self.criteria(raw, where):
            if crit is not None:
                parsed = self.one_filter(crit, label)
                if parsed is not None:
                    result.append(parsed)
        return result

    def one_filter(self, crit: Mapping[str, Any], label: str) -> Filter | None:
        before = len(self.problems)
        name = self.field_name(crit.get("field"), label)
        operator = self.operator(crit.get("operator"), label)
        if "values" in crit and "value" in crit:
            self.problems.append(f"{label}: give either values or value, not both")
            return None
        if "values" not in crit and "value" not in crit:
            self.problems.append(f"{label}: missing values")
            return None
        raw = crit["values"] if "values" in crit else crit["value"]
        if operator is None:
            return None
        values = self.values(raw, operator, label)
        if values is None or len(self.problems) > before or name is None:
            return None
        return Filter(field=name, operator=operator, values=values)

    def operator(self, raw: Any, label: str) -> Operator | None:
        if raw is None or raw == "":
            self.problems.append(f"{label}: missing operator; valid operators: {_VALID_OPERATORS}")
            return None
        if isinstance(raw, str) and raw in Operator.__members__:
            return Operator(raw)
        hint = ""
        if isinstance(raw, str) and raw.upper() in Operator.__members__:
            hint = f" (operators are uppercase: {raw.upper()!r})"
        self.problems.append(
            f"{label}: unknown operator {_show(raw)}{hint}; valid operators: {_VALID_OPERATORS}"
        )
        return None

    def values(self, raw: Any, operator: Operator, label: str) -> list[Any] | None:
        multi = operator in MULTI_VALUE_OPERATORS
        if isinstance(raw, str) and multi:
            values: list[Any] = [part.strip() for part in raw.split(",")] if raw.strip() else []
        elif isinstance(raw, list) or _is_index_map(raw):
            values = _as_list(raw) or []
        else:
            values = [raw]
        if any(isinstance(v, list | Mapping) for v in values):
            self.problems.append(f"{label}: values must be scalars, got {_show(raw)}")
            return None
        count = len(values)
        if operator in (Operator.BETWEEN, Operator.NOT_BETWEEN) and count != 2:
            self.problems.append(f"{label}: {operator} needs exactly 2 values, got {count}")
        elif operator in (Operator.IN, Operator.NOT_IN) and count == 0:
            self.problems.append(f"{label}: {operator} needs at least one value")
        elif not multi and count != 1:
            self.problems.append(f"{label}: {operator} takes a single value, got {count}")
        elif operator not in _NULL_AWARE and any(v is None for v in values):
            self.problems.append(f"{label}: {operator} cannot compare with null")
        else:
            return values
        return None


def _show(raw: Any) -> str:
    """A client's value as it should appear in an error message: quoted text or JSON."""
    shown = repr(raw) if isinstance(raw, str) else json.dumps(raw, default=str)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _is_index_map(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(str(k).isdigit() for k in value)


def _as_list(raw: Any) -> list[Any] | None:
    """A list from qs's list, or from its dict keyed by indices (sparse or past list_limit)."""
    if isinstance(raw, list):
        return raw
    if _is_index_map(raw):
        return [raw[k] for k in sorted(raw, key=int)]
    if isinstance(raw, str | int | float | bool) or raw is None:
        return [raw]
    return None


def parse_list_query(params: Mapping[str, Any], allowed_fields: Sequence[str]) -> ListQuery:
    """Validate the common listing parameters of a ``qs``-decoded query string.

    Unknown top-level parameters are ignored: routes have their own (``id_definition``...).

    Raises:
        ApiError: 400 listing every problem found.
    """
    p = _Parser(allowed_fields)
    query = ListQuery(
        limit=p.integer(params.get("limit"), "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
        offset=p.integer(params.get("offset"), "offset", 0, 0, None),
        fields=p.fields(params.get("fields")),
        order=p.orders(params.get("order"), "order"),
        filters=p.filters(params.get("filters"), "filters"),
        or_filters=p.filters(params.get("orFilters"), "orFilters"),
    )
    p.fail()
    return query


def parse_event_settings(
    settings: str | Mapping[str, Any] | None, fields: Any, allowed_fields: Sequence[str]
) -> ListQuery:
    """Validate ``GET /v1/events[/histories]``: a JSON ``settings`` object plus ``fields``.

    ``settings`` is normally the JSON text; an already-decoded object (bracket notation,
    ``settings[limit]=5``) is accepted too. Unknown keys inside it are reported, since a
    misspelt ``filters`` would otherwise silently list everything.

    Raises:
        ApiError: 400 listing every problem found.
    """
    p = _Parser(allowed_fields)
    decoded: Any = {} if settings is None else settings
    if isinstance(settings, str):
        try:
            decoded = json.loads(settings) if settings.strip() else {}
        except ValueError as exc:
            p.problems.append(f"settings: malformed JSON ({exc})")
            decoded = {}
    if not isinstance(decoded, Mapping):
        p.problems.append(f"settings must be a JSON object, got {_show(decoded)}")
        decoded = {}
    unknown = [k for k in decoded if k not in EVENT_SETTINGS_KEYS]
    if unknown:
        p.problems.append(
            f"settings: unknown keys {', '.join(map(repr, unknown))}; "
            f"allowed keys: {', '.join(EVENT_SETTINGS_KEYS)}"
        )
    query = ListQuery(
        limit=p.integer(decoded.get("limit"), "settings.limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
        offset=p.integer(decoded.get("offset"), "settings.offset", 0, 0, None),
        fields=p.fields(fields),
        order=p.orders(decoded.get("order"), "settings.order"),
        filters=p.filters(decoded.get("filter"), "settings.filter"),
    )
    p.fail()
    return query


def _text(value: Any) -> str:
    """A value's JSON spelling, the common ground when types cannot be reconciled."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, default=str, sort_keys=True)


def _moment(value: Any) -> datetime | None:
    """An aware datetime from an ISO 8601 string or date/datetime; naive means UTC."""
    if isinstance(value, datetime):
        result = value
    elif isinstance(value, date):
        result = datetime.combine(value, time())
    elif isinstance(value, str) and len(value) >= 10 and value[4] == "-" == value[7]:
        # cheap shape check first: fromisoformat alone would take "20240101" for a date
        try:
            result = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return result if result.tzinfo else result.replace(tzinfo=UTC)


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        if _INT_RE.fullmatch(value := value.strip()):
            return int(value)
        if _FLOAT_RE.fullmatch(value):
            return float(value)
    return None


def _boolean(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        return {"true": True, "1": True, "false": False, "0": False}.get(value.lower())
    return None


@dataclass(frozen=True, slots=True)
class _Operand:
    """A filter value in every form a record value might need, computed once per query."""

    text: str
    number: int | float | None
    boolean: bool | None
    moment: datetime | None

    @classmethod
    def of(cls, value: Any) -> _Operand:
        return cls(_text(value), _number(value), _boolean(value), _moment(value))

    def pair(self, record_value: Any) -> tuple[Any, Any]:
        """(record side, filter side) of one comparable type."""
        if isinstance(record_value, bool):
            if self.boolean is not None:
                return record_value, self.boolean
        elif isinstance(record_value, int | float):
            if self.number is not None:
                return record_value, self.number
        elif isinstance(record_value, str):
            if self.moment is not None:
                moment = _moment(record_value)
                if moment is not None:
                    return moment, self.moment
            return record_value, self.text
        elif isinstance(record_value, date) and self.moment is not None:
            return _moment(record_value), self.moment
        return _text(record_value), self.text


def _is_null(value: Any) -> bool:
    return value is None or value == "null"


def _membership(values: Sequence[Any]) -> Predicate:
    """Scalar test 'equals one of values', with hashed look-ups instead of a loop."""
    operands = [_Operand.of(v) for v in values if not _is_null(v)]
    texts = {o.text for o in operands}
    booleans = {o.boolean for o in operands if o.boolean is not None}
    bool_texts = {o.text for o in operands if o.boolean is None}
    numbers = {o.number for o in operands if o.number is not None}
    number_texts = {o.text for o in operands if o.number is None}
    moments = {o.moment for o in operands if o.moment is not None}

    def test(value: Any) -> bool:
        if isinstance(value, bool):
            return value in booleans or _text(value) in bool_texts
        if isinstance(value, int | float):
            return value in numbers or _text(value) in number_texts
        if isinstance(value, str):
            if value in texts:
                return True
            return bool(moments) and _moment(value) in moments
        if isinstance(value, date) and moments:
            return _moment(value) in moments
        return _text(value) in texts

    return test


def _like(pattern: str) -> re.Pattern[str]:
    """SQL LIKE to regex: % any run, _ one char, backslash escapes; the rest is literal."""
    parts: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(re.escape(next(chars, "\\")))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def _scalar_test(operator: Operator, values: Sequence[Any]) -> Predicate:
    """The positive form of an operator on one non-null record value."""
    if operator in (Operator.EQUALS, Operator.IN, Operator.NOT_EQUALS, Operator.NOT_IN):
        return _membership(values)
    if operator in (Operator.CONTAINS, Operator.NOT_CONTAINS):
        needle = _text(values[0]).casefold()
        return lambda v: needle in _text(v).casefold()
    if operator is Operator.STARTS_WITH:
        prefix = _text(values[0]).casefold()
        return lambda v: _text(v).casefold().startswith(prefix)
    if operator is Operator.ENDS_WITH:
        suffix = _text(values[0]).casefold()
        return lambda v: _text(v).casefold().endswith(suffix)
    if operator is Operator.LIKE:
        regex = _like(_text(values[0]))
        return lambda v: regex.fullmatch(_text(v)) is not None
    if operator in (Operator.BETWEEN, Operator.NOT_BETWEEN):
        low, high = _Operand.of(values[0]), _Operand.of(values[1])

        def between(v: Any) -> bool:
            a, lo = low.pair(v)
            b, hi = high.pair(v)
            return lo <= a and b <= hi

        return between
    operand = _Operand.of(values[0])
    compare: Callable[[Any, Any], bool] = {
        Operator.LESS_THAN: lambda a, b: a < b,
        Operator.LESS_THAN_OR_EQUAL_TO: lambda a, b: a <= b,
        Operator.GREATER_THAN: lambda a, b: a > b,
        Operator.GREATER_THAN_OR_EQUAL_TO: lambda a, b: a >= b,
    }[operator]
    return lambda v: compare(*operand.pair(v))


_NEGATED = {Operator.NOT_EQUALS, Operator.NOT_IN, Operator.NOT_CONTAINS, Operator.NOT_BETWEEN}


def _compile(flt: Filter) -> Callable[[Record], bool]:
    """One record predicate per filter, built once per query."""
    name, operator = flt.field, flt.operator
    positive = _scalar_test(operator, flt.values)
    null_matches = operator in _NULL_AWARE and any(_is_null(v) for v in flt.values)

    def any_match(value: Any) -> bool:
        if isinstance(value, list):
            return any(positive(e) if e is not None else null_matches for e in value)
        return positive(value)

    if operator in (Operator.NOT_EQUALS, Operator.NOT_IN):
        return lambda r: not (null_matches if (v := r.get(name)) is None else any_match(v))
    if operator in _NEGATED:
        return lambda r: (v := r.get(name)) is not None and not any_match(v)
    return lambda r: null_matches if (v := r.get(name)) is None else any_match(v)


def _combine(
    musts: list[Callable[[Record], bool]], anys: list[Callable[[Record], bool]]
) -> Callable[[Record], bool] | None:
    """(all musts) AND (any of anys, when there are some); None when nothing filters."""
    if not anys:
        if len(musts) <= 1:
            return musts[0] if musts else None
        return lambda r: all(m(r) for m in musts)
    if not musts:
        return lambda r: any(a(r) for a in anys)
    return lambda r: all(m(r) for m in musts) and any(a(r) for a in anys)


def _sort_key(name: str) -> Callable[[Record], tuple[Any, ...]]:
    """A total order over mixed values: null, booleans, numbers, timestamps, text."""

    def key(record: Record) -> tuple[Any, ...]:
        value = record.get(name)
        if value is None:
            return (0,)
        if isinstance(value, bool):
            return (1, value)
        if isinstance(value, int | float):
            return (2, value) if not (isinstance(value, float) and math.isnan(value)) else (0,)
        moment = _moment(value)
        if moment is not None:
            return (3, moment)
        return (4, _text(value))

    return key


def apply_list_query(
    records: Iterable[Record], q: ListQuery, *, default_order: Sequence[OrderBy]
) -> tuple[list[dict[str, Any]], int]:
    """Filter, sort (stable; nulls first ascending), page and project records.

    Returns:
        The page of (copied) records and the number of records matching the filters.
    """
    predicate = _combine([_compile(f) for f in q.filters], [_compile(f) for f in q.or_filters])
    matching = list(records) if predicate is None else [r for r in records if predicate(r)]
    for criterion in reversed(q.order or default_order):
        matching.sort(key=_sort_key(criterion.field), reverse=criterion.type == "desc")
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
    predicate = _combine([_compile(f) for f in q.filters], [_compile(f) for f in q.or_filters])
    return predicate or (lambda record: True)
