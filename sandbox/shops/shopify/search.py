"""Shopify's search syntax for the ``query`` argument: ``field:value`` terms with the
comparators ``:<``, ``:<=``, ``:>``, ``:>=``, joined by whitespace (AND), ``AND`` or ``OR``,
negated by ``-`` or ``NOT``, grouped by parentheses; values bare or quoted.

Dates must be quoted; one without an offset (``'2025-03-01T10:00:00'``) is read in the
shop's timezone, so only ``Z`` or an explicit offset is safe. A field the resource does not
know is ignored with a warning in ``extensions.search``, as Shopify does.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.shops.shopify.data import Row
from sandbox.shops.table import either, every
from sandbox.shops.timeline import epoch_of

Predicate = Callable[[Row], bool]
_TOKEN = re.compile(r"""\s*(\(|\)|"[^"]*"|'[^']*'|[^\s()]+)""")
_TERM = re.compile(r"""^(-?)([a-z_]+):(<=|>=|<|>)?(.*)$""", re.DOTALL)

#: per resource: search field -> (row attribute or getter, kind)
_DATE = "date"
_COMMON = {"updated_at": ("updated", _DATE), "created_at": ("created", _DATE), "id": ("id", "int")}
FIELDS: dict[str, dict[str, tuple[str, str]]] = {
    "orders": {**_COMMON, "processed_at": ("created", _DATE), "financial_status": ("status", "lower"),
               "customer_id": ("customer", "int")},
    "customers": {**_COMMON, "state": ("status", "lower")},
    "products": {**_COMMON, "status": ("status", "lower"), "vendor": ("extra", "text"),
                 "product_type": ("kind", "text")},
    "variants": {**_COMMON, "product_id": ("parent", "int")},
    "collections": {"updated_at": ("updated", _DATE), "id": ("id", "int"), "handle": ("kind", "text")},
    "checkouts": {**_COMMON, "status": ("status", "lower")},
    "discounts": {**_COMMON, "status": ("status", "lower")},
    "events": {"created_at": ("created", _DATE), "id": ("id", "int"), "action": ("status", "text"),
               "subject_type": ("extra", "lower")},
}


@dataclass
class Search:
    predicate: Predicate | None
    warnings: list[dict[str, str]] = field(default_factory=list)


class SearchError(ValueError):
    pass


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}


class _Parser:
    def __init__(self, text: str, resource: str, tz: ZoneInfo) -> None:
        self.tokens = [t for t in _TOKEN.findall(text) if t]
        self.pos = 0
        self.fields = FIELDS.get(resource, {})
        self.tz = tz
        self.warnings: list[dict[str, str]] = []

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def query(self) -> Predicate:
        alternatives = [self.conjunction()]
        while self.peek() == "OR":
            self.take()
            alternatives.append(self.conjunction())
        return either(alternatives)

    def conjunction(self) -> Predicate:
        terms = [self.term()]
        while self.peek() not in (None, "OR", ")"):
            if self.peek() == "AND":
                self.take()
            terms.append(self.term())
        return every(terms)

    def term(self) -> Predicate:
        token = self.take()
        if token == "NOT":
            inner = self.term()
            return lambda r: not inner(r)
        if token == "(":
            inner = self.query()
            if self.peek() == ")":
                self.take()
            return inner
        match = _TERM.match(token)
        if not match:  # free text: matched against the title or name
            needle = _unquote(token.lstrip("-")).casefold()
            return lambda r: needle in r.name.casefold()
        negate, name, op, raw = match.groups()
        spec = self.fields.get(name)
        if spec is None:
            self.warnings.append({"field": name, "message": "Invalid search field for this query."})
            return lambda r: True
        attr, kind = spec
        value = _unquote(raw)
        target: object
        if kind == _DATE:
            try:  # a date must be quoted, or start with its year
                if raw == value and not value[:4].isdigit():
                    raise ValueError(raw)
                target = epoch_of(value, self.tz)
            except ValueError:
                raise SearchError(f"Invalid date value for {name}: {raw}") from None
        elif kind == "int":
            digits = value.rsplit("/", 1)[-1]
            if not digits.isdigit():
                self.warnings.append({"field": name, "message": f"Invalid value: {value}"})
                return lambda r: True
            target = int(digits)
        else:
            target = value.lower() if kind == "lower" else value
        compare = _COMPARE[op or "="]

        def check(r: Row) -> bool:
            got = getattr(r, attr)
            return compare(str(got).lower() if kind == "lower" else got, target) != bool(negate)

        return check


def parse_search(text: str | None, resource: str, tz: ZoneInfo) -> Search:
    """The predicate of a ``query`` argument (None: no filter) and its warnings."""
    if text is None or not text.strip():
        return Search(None)
    parser = _Parser(text, resource, tz)
    predicate = parser.query()
    return Search(predicate, parser.warnings)
