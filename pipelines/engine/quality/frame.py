"""A batch of mapped items as the table a quality suite reads: one row per item, ``_key``
and the columns its rules read, typed as GX compares them (numbers as floats, timestamps as
naive UTC datetimes, ids with "" as missing), plus the derived columns: the least amount of
an item and its lines, and how many of its lines name a product the ledger does not know."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipelines.engine.quality.suites import AMOUNTS, LINES, UNKNOWN_PRODUCTS, Kind, Suite

if TYPE_CHECKING:
    import pandas as pd

#: items are dicts: the ABC check only for what is not one (it costs ten times more)
_MAPPING = (dict, Mapping)


def _get(item: Mapping[str, Any], path: str) -> Any:
    if "." not in path:
        return item.get(path)
    value: Any = item
    for part in path.split("."):
        value = value.get(part) if isinstance(value, _MAPPING) else None
    return value


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float):
        return None if math.isnan(value) else value  # NaN is no amount
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # an integer past float's range: no amount
        return None


def _lines(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    lines = item.get(LINES)
    return [line for line in lines if isinstance(line, _MAPPING)] if isinstance(lines, list) else []


def _amounts_min(item: Mapping[str, Any], fields: Sequence[str],
                 line_fields: Sequence[str]) -> float | None:
    """The least of the item's amounts and its lines' (None when it has none); hot: inlined."""
    low = math.inf
    values = [_get(item, path) for path in fields]
    if line_fields:
        values += [line.get(f) for line in _lines(item) for f in line_fields]
    for value in values:
        kind = type(value)
        if kind is not float and kind is not int:  # bool is neither
            value = _number(value)
            if value is None:
                continue
        low = min(low, value)
    return None if low == math.inf else float(low)


def line_products(item: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The product ids the item's lines name, as text, one per line (None: it has no lines):
    what the "lines refer to known products" rule reads of it."""
    lines = item.get(LINES)
    if not isinstance(lines, list):
        return None
    return tuple([str(line.get("product_id")) for line in lines if isinstance(line, _MAPPING)])


def _unknown_counts(items: Sequence[tuple[str, Mapping[str, Any]]], products: set[str]
                    ) -> list[float]:
    """For each item, how many of its lines name a product ``products`` does not hold.
    A chunk's lines name the same products again and again: each id is looked up once
    (ints and texts apart, so that 1, "1" and True are never taken for one another)."""
    known: dict[Any, bool] = {}  # ints and texts only
    counts: list[float] = []
    for _, item in items:
        lines = item.get(LINES)
        unknown = 0
        if isinstance(lines, list):
            for line in lines:
                if not isinstance(line, _MAPPING):
                    continue
                product = line.get("product_id")
                kind = type(product)
                if kind is int or kind is str:
                    found = known.get(product)
                    if found is None:
                        found = known[product] = str(product) in products
                else:
                    found = str(product) in products
                if not found:
                    unknown += 1
        counts.append(float(unknown))
    return counts


def kind_of(suite: Suite, column: str) -> Kind:
    """How ``column`` comes out of an item (``Kind``); the derived columns are numbers."""
    return "num" if column in (AMOUNTS, UNKNOWN_PRODUCTS) else suite.shape.columns[column]


def column_values(suite: Suite, items: Sequence[tuple[str, Mapping[str, Any]]], column: str,
                  known: Mapping[str, set[str]] | None = None) -> list[Any]:
    """``column`` of each item as the suite reads it, before pandas types it (``typed``):
    ids with "" as None, text as ``str`` ("" when missing), numbers as floats or None,
    timestamps as their text (None when not text); ``AMOUNTS`` and ``UNKNOWN_PRODUCTS``
    derived (the latter all None without ``known["products"]``)."""
    if column == AMOUNTS:
        prefix = f"{LINES}[]."
        fields = [f for f in suite.shape.amounts if not f.startswith(prefix)]
        line_fields = [f.removeprefix(prefix) for f in suite.shape.amounts if f.startswith(prefix)]
        return [_amounts_min(item, fields, line_fields) for _, item in items]
    if column == UNKNOWN_PRODUCTS:
        products = None if known is None else known.get("products")
        return [None] * len(items) if products is None else _unknown_counts(items, products)
    kind = suite.shape.columns[column]
    first, *inner = column.split(".")
    values = [item.get(first) for _, item in items]
    for part in inner:  # a level at a time: one pass a level, not a walk an item
        values = [v.get(part) if isinstance(v, _MAPPING) else None for v in values]
    if kind == "id":
        return [None if v is None or v == "" else v for v in values]
    if kind == "text":
        return [v if type(v) is str else "" if v is None else str(v) for v in values]
    if kind == "num":
        return [v if type(v) is float and v == v else _number(v) for v in values]
    if kind == "ts":
        return [v if isinstance(v, str) else None for v in values]
    return values


def typed(kind: Kind, values: list[Any]) -> Any:
    """``column_values`` as the frame holds them: numbers as float64, timestamps as naive
    UTC datetimes."""
    import pandas as pd

    if kind == "num":
        return pd.Series(values, dtype="float64")
    if kind == "ts":
        return _timestamps(pd.Series(values, dtype=object))
    return values


def item_frame(suite: Suite, items: Sequence[tuple[str, Mapping[str, Any]]],
               known: Mapping[str, set[str]] | None = None,
               columns: Collection[str] | None = None) -> pd.DataFrame:
    """One row per item: ``_key`` and the columns the rules read (``columns``; all of the
    suite's when None)."""
    import pandas as pd

    wanted = set(suite.shape.columns) | {AMOUNTS, UNKNOWN_PRODUCTS} if columns is None else columns
    derived = [c for c in (AMOUNTS, UNKNOWN_PRODUCTS) if c in wanted and (
        suite.shape.amounts if c == AMOUNTS else suite.shape.lines)]
    data: dict[str, Any] = {"_key": [key for key, _ in items]}
    for column in [c for c in suite.shape.columns if c in wanted] + derived:
        data[column] = typed(kind_of(suite, column),
                             column_values(suite, items, column, known))
    return pd.DataFrame(data)


def _timestamps(texts: pd.Series) -> pd.Series:
    """ISO 8601 texts as naive UTC datetimes (NaT when missing or unparseable).

    pandas parses the usual forms fast; what it refuses but ``datetime.fromisoformat``
    takes (the item models' test: ``10:30:00,5``, week dates) is parsed one by one. Naive,
    because GX reads tz-aware columns through a path pandas 3 deprecates.
    """
    import pandas as pd

    parsed = pd.to_datetime(texts, utc=True, errors="coerce", format="ISO8601").dt.as_unit("us")
    for index in parsed.index[parsed.isna() & texts.notna()]:
        try:
            value = datetime.fromisoformat(texts[index])
            parsed[index] = pd.Timestamp(value if value.tzinfo else value.replace(tzinfo=UTC)
                                         ).tz_convert("UTC")
        except (ValueError, OverflowError):  # unparseable, or past pandas' range: NaT
            continue
    return parsed.dt.tz_convert(None)
