"""The listing language of ``listing.py`` as OpenAPI parameters: what ``parse_list_query``
and ``parse_event_settings`` accept, and nothing they refuse.

OpenAPI gives a parameter one encoding, so each is declared in its JSON form (``filters``,
``orFilters``, ``order``, ``settings``) or its repeated form (``fields``); the others the
parser takes — bracket notation, one JSON object per repeated parameter, comma-separated
names — are in the descriptions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sandbox.marketing.limits import MAX_OFFSET
from sandbox.marketing.matching import NULL_AWARE
from sandbox.marketing.openapi import NOT_SPACE, SPACE, json_parameter, named, parameter
from sandbox.marketing.spec.query import DEFAULT_LIMIT, MAX_LIMIT, Operator

#: operators and the values they take (``listing._Parser.values``)
LISTS = (Operator.IN, Operator.NOT_IN)
RANGES = (Operator.BETWEEN, Operator.NOT_BETWEEN)
SINGLE = [op for op in Operator if op not in (*LISTS, *RANGES)]

_VALUES = (
    " `values` is one scalar or an array of one, for IN and NOT_IN an array (or a"
    " comma-separated string) of at least one, for BETWEEN and NOT_BETWEEN an array (or a"
    " comma-separated string) of two; `value` may stand for `values`. null compares with"
    " EQUALS, NOT_EQUALS, IN and NOT_IN only."
)
FILTERS = (
    "Keep the records matching every filter (`filters`) and, when there are `orFilters`, at"
    " least one of those. Declared in one encoding: a JSON array of filter objects (or one"
    " object) in one parameter; also taken: one JSON object per repeated parameter"
    " (`filters={...}&filters={...}`) and bracket notation"
    " (`filters[0][field]=email&filters[0][operator]=IN&filters[0][values][0]=a@b.c`)." + _VALUES
)
ORDER = (
    "Sort by these fields in turn (`type`: asc or desc, lowercase). Declared as JSON (an"
    " array of objects, or one object); also taken: one JSON object per repeated parameter"
    " and bracket notation (`order[0][field]=created_at&order[0][type]=desc`)."
)
FIELDS = (
    "Only these fields in each row. Repeated (`fields=a&fields=b`), comma-separated"
    " (`fields=a,b`) or in bracket notation (`fields[0]=a`)."
)
SETTINGS = (
    "A JSON object: `limit`, `offset`, `order` (as `order` of the other listings), `filter`"
    " (as `filters` of the other listings); numbers may be given as text. Also taken in"
    " bracket notation (`settings[limit]=5&settings[filter][0][field]=name&...`)." + _VALUES
)

_NULLABLE = ["string", "number", "boolean", "null"]




def _scalar(*, nullable: bool) -> dict[str, Any]:
    return {"type": _NULLABLE if nullable else _NULLABLE[:-1]}


#: operators by the values they take, and the name of that schema
_GROUPS: list[tuple[str, list[Operator]]] = [
    ("OneValue", [op for op in SINGLE if op in NULL_AWARE]),
    ("OneNonNullValue", [op for op in SINGLE if op not in NULL_AWARE]),
    ("SomeValues", list(LISTS)),
    ("TwoValues", list(RANGES)),
]


def _values(operators: Sequence[Operator]) -> dict[str, Any]:
    """What ``values`` may be for ``operators`` (one of ``_GROUPS``)."""
    if operators == list(LISTS):
        return {"anyOf": [
            {"type": "array", "items": _scalar(nullable=True), "minItems": 1},
            {"type": "string", "pattern": NOT_SPACE, "description": "comma-separated"},
            {"type": ["number", "boolean", "null"]},
        ]}
    if operators == list(RANGES):
        return {"anyOf": [
            {"type": "array", "items": _scalar(nullable=False), "minItems": 2, "maxItems": 2},
            {"type": "string", "pattern": "^[^,]*,[^,]*$", "description": "two, comma-separated"},
        ]}
    one = _scalar(nullable=all(op in NULL_AWARE for op in operators))
    return {"anyOf": [one, {"type": "array", "items": one, "minItems": 1, "maxItems": 1}]}


def _filter(field: dict[str, Any]) -> dict[str, Any]:
    """One filter object on ``field`` (a schema of the names the route knows)."""
    options = []
    for name, operators in _GROUPS:
        values = named(name, _values(operators))
        options.append({
            "type": "object", "required": ["field", "operator"],
            "properties": {"field": field, "operator": {"type": "string", "enum": operators},
                           "values": values, "value": values},
            "oneOf": [{"required": ["values"]}, {"required": ["value"]}],
        })
    return {"anyOf": options}


def _order(field: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["field", "type"], "properties": {
        "field": field, "type": {"type": "string", "enum": ["asc", "desc"]}}}


def criteria(one: dict[str, Any]) -> dict[str, Any]:
    """One criterion object, or an array of them."""
    return {"anyOf": [one, {"type": "array", "items": one}]}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


class Language:
    """The listing language over the fields of one kind of record, its schemas named after
    it (``Order`` gives ``OrderField``, ``OrderFilter``, ``OrderOrder``); without
    ``fields``, records whose fields are known at run time only."""

    def __init__(self, name: str, fields: Sequence[str] | None) -> None:
        self.name = name
        self.fields = list(fields) if fields else None
        text = {"type": "string"}
        self.field = named(f"{name}Field", {"type": "string", "enum": self.fields}
                           ) if self.fields else text
        self.filter = named(f"{name}Filter", _filter(self.field))
        self.order = named(f"{name}Order", _order(self.field))

    def fields_parameter(self) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "string"}
        if self.fields:
            name = "|".join(re.escape(f) for f in self.fields)
            one = f"{SPACE}*({name})?{SPACE}*"
            listed = {"type": "string", "pattern": f"^{one}(,{one})*$",
                      "description": "comma-separated"}
            item = {"anyOf": [self.field, named(f"{self.name}FieldList", listed)]}
        return {"name": "fields", "in": "query", "description": FIELDS, "style": "form",
                "explode": True, "schema": {"type": "array", "items": item}}

    def query(self) -> list[dict[str, Any]]:
        """The common listing parameters."""
        return [
            json_parameter("filters", criteria(self.filter), FILTERS),
            json_parameter("orFilters", criteria(self.filter), "See `filters`."),
            json_parameter("order", criteria(self.order), ORDER),
            self.fields_parameter(),
            parameter("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                                "default": DEFAULT_LIMIT}, "Records per page."),
            parameter("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET,
                                 "default": 0}, "Records skipped before the page."),
        ]

    def event_query(self) -> list[dict[str, Any]]:
        """``settings`` and ``fields`` of ``GET /v1/events`` and ``/v1/events/histories``."""
        settings = {"type": "object", "additionalProperties": False, "properties": {
            "limit": _integer(1, MAX_LIMIT),
            "offset": _integer(0, MAX_OFFSET),
            "order": _nullable(criteria(self.order)),
            "filter": _nullable(criteria(self.filter)),
        }}
        return [json_parameter("settings", settings, SETTINGS), self.fields_parameter()]

    def segmentation(self) -> dict[str, Any]:
        """A list's ``segmentation_config``: the records it holds, in this language."""
        filters = _nullable(criteria(self.filter))
        return {"type": "object", "additionalProperties": False,
                "properties": {"filters": filters, "orFilters": filters}}


def listing_query(name: str, fields: Sequence[str] | None) -> list[dict[str, Any]]:
    return Language(name, fields).query()


def _integer(low: int, high: int) -> dict[str, Any]:
    """An integer from ``low`` to ``high`` (0 or 1 to a power of ten), as a number or as
    its text (``listing._Parser.integer``: a sign, at most 20 digits, spaces around), or
    null for the default."""
    digits = len(str(high)) - 1
    assert low in (0, 1) and high == 10**digits, "a bound this pattern cannot say"
    below = "[0-9]" if low == 0 else "[1-9]"
    zero = "|-0{1,20}" if low == 0 else ""
    text = (rf"^{SPACE}*(\+?(0{{0,{20 - digits}}}{below}[0-9]{{0,{digits - 1}}}"
            rf"|0{{0,{20 - digits - 1}}}{high}){zero}){SPACE}*$")
    return {"anyOf": [{"type": "integer", "minimum": low, "maximum": high},
                      {"type": "string", "pattern": text}, {"type": "null"}]}
