"""The check every item goes through (``within_bounds``) says an item is within the bounds
exactly when the walk that names the fields (``item_bounds``) would find nothing: at each
bound's edge, on either side of it."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from pipelines.engine import limits
from pipelines.engine.limits import (
    MAX_DEPTH,
    MAX_INT,
    MAX_TEXT,
    MAX_VALUES,
    MIN_INT,
    item_bounds,
    within_bounds,
)


class _Count(int):
    pass


def _nested(levels: int) -> Any:
    value: Any = 1
    for level in range(levels):
        value = [value] if level % 2 else {"n": value}
    return value


ITEMS: list[dict[str, Any]] = [
    {}, {"a": None, "b": True, "c": "x", "d": 1, "e": 1.5, "f": [], "g": {}},
    {"a": _nested(MAX_DEPTH - 1)}, {"a": _nested(MAX_DEPTH)}, {"a": _nested(MAX_DEPTH + 1)},
    {"a": "x" * MAX_TEXT}, {"a": ["x" * (MAX_TEXT + 1)]},
    {"a": MAX_INT, "b": MIN_INT}, {"a": [MAX_INT + 1]}, {"a": {"b": MIN_INT - 1}},
    {"a": 10**400}, {"a": float("nan")}, {"a": [float("inf")]}, {"a": -float("inf")},
    {"a": [0] * (MAX_VALUES - 1)}, {"a": [0] * MAX_VALUES}, {"a": [[0] * (MAX_VALUES - 2)]},
    {"a": [[0] * (MAX_VALUES - 1)]}, dict.fromkeys(map(str, range(MAX_VALUES)), 0),
    dict.fromkeys(map(str, range(MAX_VALUES + 1)), 0),
    {"a": (1, 2)}, {"a": OrderedDict(b=1)}, {"a": _Count(3)}, {"a": b"x"},
    {"products": [{"product_id": "1", "quantity": 2, "price": 9.5}] * 3},
]


@pytest.mark.parametrize("item", ITEMS, ids=range(len(ITEMS)))
def test_within_bounds_answers_as_the_naming_walk(item: dict[str, Any],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    quick = within_bounds(item)
    monkeypatch.setattr(limits, "within_bounds", lambda item: False)
    named = item_bounds(item)
    if quick:
        assert named == {}
    else:  # past a bound, or not plain JSON (which the naming walk judges)
        plain = all(type(v) in (dict, list, str, int, float, bool, type(None))
                    for v in _values(item))
        assert named != {} or not plain


def _values(value: Any) -> list[Any]:
    found = []
    stack = list(value.values()) if isinstance(value, dict) else list(value)
    while stack:
        found.append(current := stack.pop())
        if isinstance(current, dict | list | tuple):
            stack.extend(current.values() if isinstance(current, dict) else current)
    return found
