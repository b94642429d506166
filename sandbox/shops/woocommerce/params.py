"""Query parameters validated the way WordPress validates a route's schema, with its messages.

Unknown parameters are ignored, as WordPress does (so ``modified_after`` on customers is
silently without effect, as on a real shop). Arrays come as ``a,b`` or ``name[]=a&name[]=b``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams

from sandbox.shops.woocommerce.errors import invalid_params
from sandbox.shops.woocommerce.names import ORDER_STATUSES
from sandbox.shops.woocommerce.store import parse_datetime

_INTEGER = re.compile(r"^-?\d+$")
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


@dataclass(frozen=True)
class P:
    kind: str  # int | bool | date | enum | enums | ids | str
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()


def _common(order: str, orderby: tuple[str, ...], orderby_default: str) -> dict[str, P]:
    return {
        "context": P("enum", "view", choices=("view", "edit")),
        "page": P("int", 1, minimum=1),
        "per_page": P("int", 10, minimum=1, maximum=100),
        "offset": P("int"),
        "search": P("str"),
        "include": P("ids", ()),
        "exclude": P("ids", ()),
        "order": P("enum", order, choices=("asc", "desc")),
        "orderby": P("enum", orderby_default, choices=orderby),
        "_fields": P("str"),
    }


_DATES = {
    "after": P("date"), "before": P("date"), "modified_after": P("date"),
    "modified_before": P("date"), "dates_are_gmt": P("bool", False),
}
_CRUD_ORDERBY = ("date", "id", "include", "title", "slug", "modified")
_PRODUCT_STATUS = P("enum", "any", choices=("any", "future", "trash", "draft", "pending",
                                            "private", "publish"))

SPECS: dict[str, dict[str, P]] = {
    "orders": {**_common("desc", _CRUD_ORDERBY, "date"), **_DATES,
               "status": P("enums", ("any",), choices=("any", "trash",
                                                       *(s for s, _ in ORDER_STATUSES))),
               "customer": P("int"), "product": P("int"), "parent": P("ids", ())},
    "products": {**_common("desc", (*_CRUD_ORDERBY, "price", "popularity", "rating"), "date"),
                 **_DATES, "status": _PRODUCT_STATUS, "sku": P("str"), "category": P("str"),
                 "type": P("enum", None, choices=("simple", "grouped", "external", "variable"))},
    "variations": {**_common("desc", _CRUD_ORDERBY, "date"), **_DATES,
                   "status": _PRODUCT_STATUS, "sku": P("str")},
    "coupons": {**_common("desc", _CRUD_ORDERBY, "date"), **_DATES, "code": P("str")},
    "customers": {**_common("asc", ("id", "include", "name", "registered_date"), "name"),
                  "email": P("str"),
                  "role": P("enum", "customer", choices=(
                      "all", "administrator", "editor", "author", "contributor", "subscriber",
                      "customer", "shop_manager"))},
    "categories": {**_common("asc", ("id", "include", "name", "slug", "term_group",
                                     "description", "count"), "name"),
                   "hide_empty": P("bool", False), "parent": P("int"), "product": P("int"),
                   "slug": P("str")},
}


def _values(query: QueryParams, name: str) -> list[str]:
    return query.getlist(name) + query.getlist(f"{name}[]")


def _split(values: list[str]) -> list[str]:
    return [part for value in values for part in re.split(r"[,\s]+", value) if part]


def _check(name: str, spec: P, raw: str) -> tuple[Any, tuple[str, str] | None]:
    if spec.kind == "int":
        if not _INTEGER.match(raw.strip()):
            return None, ("rest_invalid_type", f"{name} is not of type integer.")
        value = int(raw)
        low, high = spec.minimum, spec.maximum
        if low is not None and high is not None and not low <= value <= high:
            return None, ("rest_out_of_bounds",
                          f"{name} must be between {low} (inclusive) and {high} (inclusive)")
        if low is not None and value < low:
            return None, ("rest_out_of_bounds", f"{name} must be greater than or equal to {low}")
        return abs(value), None  # WordPress sanitizes these with absint
    if spec.kind == "bool":
        flag = _BOOLEANS.get(raw.strip().lower())
        return flag, None if flag is not None else (
            "rest_invalid_type", f"{name} is not of type boolean.")
    if spec.kind == "date":
        try:
            return parse_datetime(raw), None
        except ValueError:
            return None, ("rest_invalid_date", "Invalid date.")
    if spec.kind == "enum" and raw not in spec.choices:
        return None, ("rest_not_in_enum", f"{name} is not one of {', '.join(spec.choices)}.")
    return raw, None


def parse(query: QueryParams, resource: str) -> dict[str, Any]:
    """The route's parameters with defaults; a 400 ``rest_invalid_param`` lists every bad one."""
    out: dict[str, Any] = {}
    problems: dict[str, tuple[str, str]] = {}
    for name, spec in SPECS[resource].items():
        values = _values(query, name)
        if not values:
            out[name] = spec.default
        elif spec.kind == "ids":
            out[name] = tuple(abs(int(v)) if _INTEGER.match(v) else 0 for v in _split(values))
        elif spec.kind == "enums":
            items = _split(values)
            bad = next((i for i, v in enumerate(items) if v not in spec.choices), None)
            if bad is not None:
                problems[name] = ("rest_not_in_enum",
                                  f"{name}[{bad}] is not one of {', '.join(spec.choices)}.")
            out[name] = tuple(items)
        else:
            value, problem = _check(name, spec, values[-1])
            if problem:
                problems[name] = problem
            out[name] = value
    if problems:
        raise invalid_params(problems)
    return out
