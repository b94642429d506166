"""A batch of mapped items as the table a quality suite reads: one row per item, ``_key``
and the columns its rules read, typed as GX compares them (numbers as floats, timestamps as
naive UTC datetimes, ids with "" as missing), plus the derived columns: the least amount of
an item and its lines, and how many of its lines name a product the ledger does not know."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipelines.engine.quality.suites import AMOUNTS, LINES, UNKNOWN_PRODUCTS, Suite

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


def _unknown_products(item: Mapping[str, Any], products: set[str]) -> int:
    """Lines naming a product ``products`` does not hold."""
    unknown = 0
    for product in line_products(item) or ():
        if product not in products:
            unknown += 1
    return unknown


def item_frame(suite: Suite, items: Sequence[tuple[str, Mapping[str, Any]]],
               known: Mapping[str, set[str]] | None = None,
               columns: Collection[str] | None = None) -> pd.DataFrame:
    """One row per item: ``_key`` and the columns the rules read (``columns``; all of the
    suite's when None)."""
    import pandas as pd

    wanted = set(suite.shape.columns) | {AMOUNTS, UNKNOWN_PRODUCTS} if columns is None else columns
    data: dict[str, Any] = {"_key": [key for key, _ in items]}
    for column, kind in suite.shape.columns.items():
        if column not in wanted:
            continue
        values = ([item.get(column) for _, item in items] if "." not in column
                  else [_get(item, column) for _, item in items])
        if kind == "id":
            data[column] = [None if v is None or v == "" else v for v in values]
        elif kind == "text":
            data[column] = ["" if v is None else str(v) for v in values]
        elif kind == "num":
            data[column] = pd.Series([_number(v) for v in values], dtype="float64")
        elif kind == "ts":
            texts = pd.Series([v if isinstance(v, str) else None for v in values], dtype=object)
            data[column] = _timestamps(texts)
        else:
            data[column] = values
    if suite.shape.amounts and AMOUNTS in wanted:
        prefix = f"{LINES}[]."
        fields = [f for f in suite.shape.amounts if not f.startswith(prefix)]
        line_fields = [f.removeprefix(prefix) for f in suite.shape.amounts if f.startswith(prefix)]
        data[AMOUNTS] = pd.Series([_amounts_min(item, fields, line_fields) for _, item in items],
                                  dtype="float64")
    if suite.shape.lines and UNKNOWN_PRODUCTS in wanted:
        products = None if known is None else known.get("products")
        data[UNKNOWN_PRODUCTS] = pd.Series(
            [None if products is None else _unknown_products(item, products) for _, item in items],
            dtype="float64")
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
