"""What one mapped item may hold: the bounds that keep a single record from crashing,
hanging or exhausting a run.

Every item is measured against them before it is validated, hashed or sent, by one
iterative walk (no recursion, so depth itself cannot overflow the stack); an item past a
bound is quarantined with a reason that names the field and the bound. The bounds are far
above what a shop's record holds, and what the API takes: its integers are 64-bit, its
numbers finite, its text fields at most 65 535 characters (``Text``), and no item nests
more than a few levels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

#: levels of objects and lists inside an item (an order's lines are 2 deep)
MAX_DEPTH = 32
#: characters of one text value (ten times the API's longest text field)
MAX_TEXT = 1_000_000
#: values in one item, counting every nested one
MAX_VALUES = 100_000
#: the integers the API (and the ledger's JSON) can hold: signed 64-bit
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
#: the bounds by name, as ``item_bounds`` reports them
DEPTH, TEXT, VALUES = "nesting depth", "text length", "values per item"
INTS, FLOATS = "64-bit integers", "finite numbers"


def item_problems(item: Mapping[str, Any]) -> list[str]:
    """Why ``item`` is past a bound (empty when it is within all): one reason per bound
    broken, naming the first field that breaks it."""
    return list(item_bounds(item).values())


def item_bounds(item: Mapping[str, Any]) -> dict[str, str]:
    """``item_problems`` by the bound broken (``text length``: its reason), so that a
    report can count items per bound."""
    if within_bounds(item):
        return {}
    found: dict[str, str] = {}
    stack: list[tuple[str, Any, int]] = [(str(k), v, 1) for k, v in item.items()]
    seen = 0
    while stack:
        path, value, depth = stack.pop()
        path = path if len(path) <= 60 else path[:60] + "…"
        seen += 1
        if seen > MAX_VALUES:
            found[VALUES] = f"item: more than {MAX_VALUES:,} values (the limit per item)"
            break
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            if not MIN_INT <= value <= MAX_INT:
                found.setdefault(INTS, f"{path}: {_digits(value)} is beyond the 64-bit"
                                       " integers the API takes")
        elif isinstance(value, float):
            if not math.isfinite(value):
                found.setdefault(FLOATS, f"{path}: {value} is not a finite number")
        elif isinstance(value, str):
            if len(value) > MAX_TEXT:
                found.setdefault(TEXT, f"{path}: {len(value):,} characters, more than the"
                                       f" {MAX_TEXT:,} a text value may have")
        elif isinstance(value, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                found.setdefault(DEPTH, f"{path}: nested more than {MAX_DEPTH} levels deep"
                                        " (the limit)")
                continue
            children = value.items() if isinstance(value, Mapping) else enumerate(value)
            stack.extend((f"{path}.{k}", v, depth + 1) for k, v in children)
    return found


def within_bounds(item: Mapping[str, Any]) -> bool:
    """True when ``item_bounds`` finds nothing: its walk without the paths it names (the
    cost of a check on every item). Whatever is not a plain JSON value (a tuple, a
    Mapping that is not a dict, an int subclass) answers False, for ``item_bounds`` to
    judge."""
    return len(item) <= MAX_VALUES and _plain(item.values(), 1, [len(item)])


def _plain(values: Iterable[Any], depth: int, seen: list[int]) -> bool:
    """Whether ``values``, at ``depth``, and all they hold are within the bounds; ``seen``
    counts the values met so far. Recursive, a call per object or list, not per value:
    the depth it may reach is ``MAX_DEPTH``."""
    for value in values:
        kind = type(value)
        if kind is str:
            if len(value) > MAX_TEXT:
                return False
        elif kind is int:
            if not MIN_INT <= value <= MAX_INT:
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                return False
            seen[0] += len(value)
            if seen[0] > MAX_VALUES or not _plain(
                    value.values() if kind is dict else value, depth + 1, seen):
                return False
        elif value is not None and kind is not bool:
            return False
    return True


def _digits(value: int) -> str:
    """A huge integer as a short text: its sign, first digits and length."""
    text = str(value) if value.bit_length() < 4000 else None
    if text is not None and len(text) <= 30:
        return text
    length = len(text) if text is not None else f"~{int(value.bit_length() * 0.30103):,}"
    return f"an integer of {length} digits"


#: how much of an unreadable record the ledger keeps to show a person
KEPT_TEXT = 2_000
KEPT_VALUES = 1_000


def ledger_safe(value: Any) -> Any:
    """``value`` as JSON the ledger can keep and a person can read: within the bounds above
    (deeper levels, longer texts and more values cut, with a marker saying so), numbers
    JSON cannot hold and other objects as text. For the payload of an item held back
    because it is past a bound or cannot be written at all."""
    budget = [KEPT_VALUES]

    def safe(value: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            return "…(cut: too many values)"
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value if MIN_INT <= value <= MAX_INT else _digits(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, str):
            return value if len(value) <= KEPT_TEXT else (
                f"{value[:KEPT_TEXT]}…(cut: {len(value):,} characters)")
        if isinstance(value, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                return f"…(cut: nested more than {MAX_DEPTH} levels deep)"
            if isinstance(value, Mapping):
                return {str(k)[:KEPT_TEXT]: safe(v, depth + 1) for k, v in value.items()}
            return [safe(v, depth + 1) for v in value]
        if isinstance(value, bytes | bytearray | memoryview):
            return safe(repr(bytes(value)), depth)
        return safe(str(value), depth)

    return safe(value, 0)
