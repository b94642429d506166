"""The listing parameters a request may send, read into a ``ListQuery`` or refused.

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
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import MAX_OFFSET
from sandbox.marketing.matching import NULL_AWARE
from sandbox.marketing.spec.query import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MULTI_VALUE_OPERATORS,
    Filter,
    Operator,
    OrderBy,
)

__all__ = ["EVENT_SETTINGS_KEYS", "ListQuery", "parse_event_settings", "parse_list_query"]

EVENT_SETTINGS_KEYS = ("limit", "offset", "order", "filter")
_VALID_OPERATORS = ", ".join(Operator)
#: a sign and at most 20 digits: anything longer is past 64 bits (and past ``int()``'s own
#: limit of digits)
_INT_RE = re.compile(r"[+-]?[0-9]{1,20}")



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
        elif operator not in NULL_AWARE and any(v is None for v in values):
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
        offset=p.integer(params.get("offset"), "offset", 0, 0, MAX_OFFSET),
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
        offset=p.integer(decoded.get("offset"), "settings.offset", 0, 0, MAX_OFFSET),
        fields=p.fields(fields),
        order=p.orders(decoded.get("order"), "settings.order"),
        filters=p.filters(decoded.get("filter"), "settings.filter"),
    )
    p.fail()
    return query
