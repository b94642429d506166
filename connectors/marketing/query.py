"""The Marketing API's listing language, as the client reads the spec.

The client builds queries with ``Query`` (below), which renders either of the spec's two
query encodings. The sandbox has its own reading (``sandbox/marketing/spec``);
``tests/sandbox/test_agrees_with_client.py`` holds the two together.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

DEFAULT_LIMIT = 10
"""Page size when a listing request gives no ``limit`` (spec, Limits)."""

MAX_LIMIT = 1000
"""Largest ``limit`` accepted; the spec does not show one, the API enforces this."""


class Operator(StrEnum):
    """Filter operators, spelled exactly as the API expects them (uppercase)."""

    EQUALS = "EQUALS"
    NOT_EQUALS = "NOT_EQUALS"
    CONTAINS = "CONTAINS"
    NOT_CONTAINS = "NOT_CONTAINS"
    STARTS_WITH = "STARTS_WITH"
    ENDS_WITH = "ENDS_WITH"
    LESS_THAN = "LESS_THAN"
    LESS_THAN_OR_EQUAL_TO = "LESS_THAN_OR_EQUAL_TO"
    GREATER_THAN = "GREATER_THAN"
    GREATER_THAN_OR_EQUAL_TO = "GREATER_THAN_OR_EQUAL_TO"
    IN = "IN"
    NOT_IN = "NOT_IN"
    LIKE = "LIKE"
    BETWEEN = "BETWEEN"
    NOT_BETWEEN = "NOT_BETWEEN"


MULTI_VALUE_OPERATORS: frozenset[Operator] = frozenset(
    {Operator.IN, Operator.NOT_IN, Operator.BETWEEN, Operator.NOT_BETWEEN}
)
"""Operators taking an array (or a comma-separated string); all others take one value."""


class Filter(BaseModel):
    """One criterion of ``filters`` / ``orFilters`` (or of an event listing's ``filter``)."""

    model_config = ConfigDict(frozen=True)

    field: str
    operator: Operator
    values: list[Any]


class OrderBy(BaseModel):
    """One sorting criterion of ``order``; ``type`` is lowercase on the wire."""

    model_config = ConfigDict(frozen=True)

    field: str
    type: Literal["asc", "desc"] = "asc"


# --- the client-side builder ---------------------------------------------------------------

Encoding = Literal["brackets", "json"]
"""How ``filters``/``orFilters``/``order`` travel in the query string (spec, Listing)."""

ENCODINGS: tuple[Encoding, ...] = ("brackets", "json")

_SCALARS = (str, int, float, bool, Decimal, date, datetime, type(None))
_NULL_AWARE = frozenset({Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN})


class QueryError(ValueError):
    """A listing query the API would refuse; raised while building it, before anything is sent."""


def _operator(raw: Operator | str) -> Operator:
    try:
        return Operator(raw)
    except ValueError:
        hint = ""
        if isinstance(raw, str) and raw.upper() in Operator.__members__:
            hint = f" (operators are uppercase: {raw.upper()!r})"
        raise QueryError(
            f"unknown operator {raw!r}{hint}; valid operators: {', '.join(Operator)}"
        ) from None


def _field_name(name: Any, what: str = "field") -> str:
    if not isinstance(name, str) or not name.strip() or "," in name:
        raise QueryError(f"{what} must be a non-empty field name without commas, got {name!r}")
    return name


def _check_values(field: str, operator: Operator, values: Sequence[Any]) -> list[Any]:
    """The checks the API makes on one criterion, made early so the message names the call."""
    where = f"{field} {operator}"
    for value in values:
        if not isinstance(value, _SCALARS):
            raise QueryError(f"{where}: values must be scalars, got {value!r}")
    count = len(values)
    if operator in (Operator.BETWEEN, Operator.NOT_BETWEEN) and count != 2:
        raise QueryError(f"{where} needs exactly 2 values (low, high), got {count}")
    if operator in MULTI_VALUE_OPERATORS and count == 0:
        raise QueryError(f"{where} needs at least one value")
    if operator not in MULTI_VALUE_OPERATORS and count != 1:
        raise QueryError(f"{where} takes a single value, got {count}")
    if operator not in _NULL_AWARE and any(v is None for v in values):
        raise QueryError(f"{where} cannot compare with null")
    return list(values)


def criterion(field: str, operator: Operator | str, *values: Any) -> Filter:
    """One validated filter; a multi-value operator also takes its values as one list."""
    op = _operator(operator)
    if op in MULTI_VALUE_OPERATORS and len(values) == 1 and isinstance(values[0], list | tuple):
        values = tuple(values[0])
    return Filter(field=_field_name(field), operator=op, values=_check_values(field, op, values))


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _text_value(value: Any) -> str:
    """A value as bracket notation carries it: text, with JSON spellings for the rest.

    ``null`` stands for None (the API reads the string "null" as null), booleans are
    ``true``/``false``, numbers as Python prints them.
    """
    value = _json_value(value)
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _filter_json(flt: Filter) -> dict[str, Any]:
    values = [_json_value(v) for v in flt.values]
    multi = flt.operator in MULTI_VALUE_OPERATORS
    return {
        "field": flt.field,
        "operator": flt.operator.value,
        "values": values if multi else values[0],
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Query(BaseModel):
    """An immutable listing query: each builder method returns a new one.

    >>> q = Query().where("currency", "IN", "EUR", "USD").order_by("amount", "desc").page(50)
    >>> q.to_params("json")  # doctest: +SKIP

    Everything the API would refuse (unknown operator, wrong number of values, limit out of
    range) is refused here with a ``QueryError``, so no request is spent on it.
    """

    model_config = ConfigDict(frozen=True)

    filters: tuple[Filter, ...] = ()
    or_filters: tuple[Filter, ...] = ()
    order: tuple[OrderBy, ...] = ()
    fields: tuple[str, ...] | None = None
    limit: int | None = None
    offset: int | None = None

    @model_validator(mode="after")
    def _valid(self) -> Query:
        if self.limit is not None and not 1 <= self.limit <= MAX_LIMIT:
            raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        if self.offset is not None and self.offset < 0:
            raise QueryError(f"offset must be >= 0, got {self.offset}")
        for flt in (*self.filters, *self.or_filters):
            _check_values(flt.field, flt.operator, flt.values)
        return self

    def _with(self, **changes: Any) -> Query:
        # through the constructor (not model_copy) so the result is validated too
        try:
            return Query(**{**self.__dict__, **changes})
        except ValidationError as exc:
            messages = [str(e["msg"]).removeprefix("Value error, ") for e in exc.errors()]
            raise QueryError("; ".join(messages)) from None

    def where(self, field: str, operator: Operator | str, *values: Any) -> Query:
        """AND one more criterion (``filters``)."""
        return self._with(filters=(*self.filters, criterion(field, operator, *values)))

    def or_where(self, field: str, operator: Operator | str, *values: Any) -> Query:
        """Add a criterion to ``orFilters``: records must match at least one of them."""
        return self._with(or_filters=(*self.or_filters, criterion(field, operator, *values)))

    def order_by(self, field: str, direction: Literal["asc", "desc"] = "asc") -> Query:
        """Sort by one more field (earlier calls sort first)."""
        if direction not in ("asc", "desc"):
            raise QueryError(f"direction must be 'asc' or 'desc' (lowercase), got {direction!r}")
        return self._with(order=(*self.order, OrderBy(field=_field_name(field), type=direction)))

    def select(self, *fields: str) -> Query:
        """Project records to these fields (replaces an earlier selection)."""
        if not fields:
            raise QueryError("select needs at least one field name")
        return self._with(fields=tuple(_field_name(f, "a selected field") for f in fields))

    def page(self, limit: int, offset: int = 0) -> Query:
        return self._with(limit=limit, offset=offset)

    def to_params(self, encoding: Encoding = "brackets") -> list[tuple[str, str]]:
        """The query-string pairs of a common listing, in one of the spec's two encodings.

        ``brackets``: ``filters[0][field]=..&filters[0][operator]=..&filters[0][values]=..``,
        multi-value operators comma-separated (``filters[0][values]=a,b``: a read-back of 100
        ids fits a quarter of the URL) unless a value is empty or holds a comma, then indexed
        (``filters[0][values][0]=a&filters[0][values][1]=b``). ``json``: one JSON object per
        repeated ``filters=`` / ``orFilters=`` / ``order=`` parameter. ``fields`` is
        comma-separated in both.
        """
        if encoding not in ENCODINGS:
            raise QueryError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
        params: list[tuple[str, str]] = []
        if self.fields:
            params.append(("fields", ",".join(self.fields)))
        for name, criteria in (("filters", self.filters), ("orFilters", self.or_filters)):
            for i, flt in enumerate(criteria):
                if encoding == "json":
                    params.append((name, _dumps(_filter_json(flt))))
                    continue
                params += [(f"{name}[{i}][field]", flt.field),
                           (f"{name}[{i}][operator]", flt.operator.value)]
                if flt.operator in MULTI_VALUE_OPERATORS:
                    texts = [_text_value(v) for v in flt.values]
                    if all(t and "," not in t for t in texts):
                        params.append((f"{name}[{i}][values]", ",".join(texts)))
                    else:
                        params += [(f"{name}[{i}][values][{j}]", t) for j, t in enumerate(texts)]
                else:
                    params.append((f"{name}[{i}][values]", _text_value(flt.values[0])))
        for i, by in enumerate(self.order):
            if encoding == "json":
                params.append(("order", _dumps({"field": by.field, "type": by.type})))
            else:
                params += [(f"order[{i}][field]", by.field), (f"order[{i}][type]", by.type)]
        if self.limit is not None:
            params.append(("limit", str(self.limit)))
        if self.offset is not None:
            params.append(("offset", str(self.offset)))
        return params

    def to_event_settings(self) -> str:
        """The JSON ``settings`` of ``GET events`` and ``events/histories``.

        Event listings know ``limit``, ``offset``, ``order`` and ``filter`` (ANDed) only.
        """
        if self.or_filters:
            raise QueryError("event listings take no orFilters: use where() only")
        settings: dict[str, Any] = {}
        if self.limit is not None:
            settings["limit"] = self.limit
        if self.offset is not None:
            settings["offset"] = self.offset
        if self.order:
            settings["order"] = [{"field": o.field, "type": o.type} for o in self.order]
        if self.filters:
            settings["filter"] = [_filter_json(f) for f in self.filters]
        return _dumps(settings)

    def to_event_params(self) -> list[tuple[str, str]]:
        """``settings`` plus one ``fields`` parameter per selected field."""
        return [("settings", self.to_event_settings()), *(("fields", f) for f in self.fields or ())]
