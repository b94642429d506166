"""Matching, sorting: the semantics of the listing language over plain records.

Filters compile once per query into predicates; see ``listing.py``'s docstring for the
rules (type coercion, nulls, case, list fields).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from sandbox.marketing.spec.query import Filter, Operator

NULL_AWARE = frozenset({Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN})
_INT_RE = re.compile(r"[+-]?\d+")
#: one way only to read each text (``\d+\.?\d*`` would try every split of a long run of
#: digits: quadratic on a filter value)
_FLOAT_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

Record = Mapping[str, Any]
Predicate = Callable[[Any], bool]


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
            # past int()'s limit of digits: as a float (a huge number, or infinity)
            return int(value) if len(value) <= 4000 else float(value)
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


def _fold(text: str) -> str:
    """``text`` in lower case, character for character (so that ``_`` still counts one): the
    rare character whose lower case is longer (``İ``) is kept as it is."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


@dataclass(frozen=True, slots=True)
class _Segment:
    """A run of a LIKE pattern between two ``%``: fixed text, found with ``str.find``; or,
    when it holds ``_``, a regular expression of literals and ``.`` only — no repetition,
    so the engine tries it once per position and cannot backtrack any further."""

    length: int
    #: the fixed text (a segment without ``_``), or the expression (one with)
    text: str
    wild: re.Pattern[str] | None

    def at(self, text: str, position: int) -> bool:
        """Whether the segment matches ``text`` at ``position``."""
        if self.wild is None:
            return text.startswith(self.text, position)
        return self.wild.match(text, position) is not None

    def find(self, text: str, start: int) -> int:
        """The leftmost position from ``start`` where the segment matches, or -1."""
        if self.wild is None:
            return text.find(self.text, start)
        found = self.wild.search(text, start)
        return -1 if found is None else found.start()


def _segments(pattern: str) -> list[_Segment]:
    """A LIKE pattern split on ``%``: ``_`` any one character, a backslash escapes the next."""
    segments: list[_Segment] = []
    tokens: list[str | None] = []  # a literal character, or None for `_`

    def close() -> None:
        if None in tokens:
            wild = "".join("." if t is None else re.escape(t) for t in tokens)
            segments.append(_Segment(len(tokens), "", re.compile(wild, re.DOTALL)))
        else:
            segments.append(_Segment(len(tokens), "".join(t for t in tokens if t), None))
        tokens.clear()

    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            tokens.append(next(chars, "\\"))
        elif char == "%":
            close()
        else:
            tokens.append(None if char == "_" else char)
    close()
    return segments


def _like(pattern: str) -> Callable[[str], bool]:
    """SQL LIKE, case-insensitive, in time linear in the text: the first segment must start
    it, the last end it, and those between are found in order, each as far left as it goes
    (which leaves the most room for the rest, so no other placement needs trying)."""
    segments = _segments(_fold(pattern))
    first, last, middle = segments[0], segments[-1], segments[1:-1]

    def matches(value: str) -> bool:
        text = _fold(value)
        if len(segments) == 1:
            return len(text) == first.length and first.at(text, 0)
        if not first.at(text, 0):
            return False
        position = first.length
        for segment in middle:
            found = segment.find(text, position)
            if found == -1:
                return False
            position = found + segment.length
        end = len(text) - last.length
        return end >= position and last.at(text, end)

    return matches


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
        like = _like(_text(values[0]))
        return lambda v: like(_text(v))
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


def compile_filter(flt: Filter) -> Callable[[Record], bool]:
    """One record predicate per filter, built once per query."""
    name, operator = flt.field, flt.operator
    positive = _scalar_test(operator, flt.values)
    null_matches = operator in NULL_AWARE and any(_is_null(v) for v in flt.values)

    def any_match(value: Any) -> bool:
        if isinstance(value, list):
            return any(positive(e) if e is not None else null_matches for e in value)
        return positive(value)

    if operator in (Operator.NOT_EQUALS, Operator.NOT_IN):
        return lambda r: not (null_matches if (v := r.get(name)) is None else any_match(v))
    if operator in _NEGATED:
        return lambda r: (v := r.get(name)) is not None and not any_match(v)
    return lambda r: null_matches if (v := r.get(name)) is None else any_match(v)


def combine(
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


def sort_key(name: str) -> Callable[[Record], tuple[Any, ...]]:
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


def filter_predicate(filters: Sequence[Filter], or_filters: Sequence[Filter]) -> Callable[[Record], bool] | None:
    """(all filters) AND (any or_filters, when there are some); None when nothing filters."""
    return combine([compile_filter(f) for f in filters], [compile_filter(f) for f in or_filters])
