"""A batch of mapped items as the table a quality suite reads: one row per item, indexed by
its key (``_key``), with the columns its rules read, typed as GX compares them (numbers as
floats, timestamps as naive UTC datetimes, ids with "" as missing), plus the derived
columns: the least amount of an item and its lines, and how many of its lines name a
product the ledger does not know."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from pipelines.engine.quality.suites import (
    AMOUNTS,
    LINES,
    SHAPES,
    UNKNOWN_PRODUCTS,
    Kind,
    Suite,
)

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
    return _line_ids(item.get(LINES))


def _line_ids(lines: Any) -> tuple[str, ...] | None:
    if not isinstance(lines, list):
        return None
    return tuple([str(line.get("product_id")) for line in lines if isinstance(line, _MAPPING)])


class ChunkLines:
    """The product ids a chunk's order lines name, as text (``line_products``): read once,
    for the look-up of the products the ledger knows (``gate.KnownProducts``) and for the
    "lines refer to known products" rule.

    Most chunks name only products the ledger knows, and in one language: then every item
    counts 0 unknown lines, and one set of the chunk's ids answers both, gathered in one
    pass over its lines. Item by item (``per_item``) they are read only when not."""

    def __init__(self, raw: Sequence[Any] | None = None,
                 taken: Sequence[tuple[str, ...] | None] | None = None) -> None:
        """``raw``: each item's lines as it holds them (``read``); ``taken``: each item's
        ``line_products``, taken already (``suite_row``)."""
        self._raw = raw
        self._per_item = None if taken is None else list(taken)
        self._named: set[str] | None = None

    @classmethod
    def read(cls, items: Iterable[Mapping[str, Any]]) -> ChunkLines:
        """The lines of ``items``."""
        return cls(raw=[item.get(LINES) for item in items])

    def __len__(self) -> int:
        return len(self._per_item if self._per_item is not None else self._raw or ())

    @property
    def per_item(self) -> list[tuple[str, ...] | None]:
        """Each item's ``line_products``."""
        if self._per_item is None:
            self._per_item = [_line_ids(lines) for lines in self._raw or ()]
        return self._per_item

    @property
    def named(self) -> set[str]:
        """Every product id the chunk's lines name."""
        if self._named is None:
            if self._per_item is not None:
                self._named = set().union(*filter(None, self._per_item))
            else:
                self._named = {str(line.get("product_id")) for lines in self._raw or ()
                               if isinstance(lines, list)
                               for line in lines if isinstance(line, _MAPPING)}
        return self._named

    def by_lang(self, langs: Sequence[Any]) -> dict[Any, set[str]]:
        """The ids named by the items of each language (``langs``: the items', in order);
        a language whose items name none is left out."""
        try:
            one = len(set(langs)) == 1
        except TypeError:  # a language that is no text (not one an item model passes)
            one = False
        if one:  # the chunk's ids, without a pass per item
            return {langs[0]: self.named} if self.named else {}
        named: dict[Any, set[str]] = {}
        for lang, ids in zip(langs, self.per_item, strict=True):
            if ids:
                named.setdefault(lang, set()).update(ids)
        return named

    def unknown_counts(self, products: set[str]) -> list[float]:
        """How many of each item's lines name a product not in ``products``."""
        if products.issuperset(self.named):
            return [0.0] * len(self)
        return [0.0 if not ids or products.issuperset(ids)
                else float(sum(product not in products for product in ids))
                for ids in self.per_item]


#: what a suite reads of an item, taken where the item is made (``suite_row``)
Row = tuple[Any, ...]


@cache
def _row_columns(resource: str) -> tuple[str, ...]:
    """What ``suite_row`` takes of an item of ``resource`` before its lines: the shape's
    columns, then the item's language when its items have lines and the shape reads none
    (carts): the look-up of the products they name reads it (``gate.KnownProducts``)."""
    shape = SHAPES[resource]
    extra = ("lang",) if shape.lines and "lang" not in shape.columns else ()
    return (*shape.columns, *extra)


@cache
def _row_paths(resource: str) -> tuple[tuple[tuple[str, ...], ...], bool] | None:
    """``_row_columns`` of ``resource`` as key paths, and whether its items have lines."""
    shape = SHAPES.get(resource)
    if shape is None:
        return None
    return tuple(tuple(column.split(".")) for column in _row_columns(resource)), shape.lines


def suite_row(resource: str, item: Mapping[str, Any]) -> Row | None:
    """What the suite of ``resource`` reads of ``item``: the value at each of its
    ``_row_columns``, in order, then its lines' product ids (``line_products``) when its
    items have lines; None for a resource without a suite. A read process takes it beside
    the item's hash, while the item is still in the processor's caches: read in the run, a
    chunk's items cost a cache miss each (``column_values``)."""
    shape = _row_paths(resource)
    if shape is None:
        return None
    paths, lines = shape
    values = []
    for first, *inner in paths:
        value = item.get(first)
        for part in inner:
            value = value.get(part) if isinstance(value, _MAPPING) else None
        values.append(value)
    if lines:
        values.append(line_products(item))
    return tuple(values)


def has_lines(resource: str) -> bool:
    """Whether the items of ``resource`` carry order lines its suite reads."""
    shape = SHAPES.get(resource)
    return shape is not None and shape.lines


def row_lines(resource: str, rows: Sequence[Row]) -> ChunkLines | None:
    """The lines' product ids of ``rows`` (``suite_row``); None when its items have none."""
    return ChunkLines(taken=[row[-1] for row in rows]) if has_lines(resource) else None


def row_values(resource: str, rows: Sequence[Row], column: str) -> list[Any] | None:
    """``column`` of ``rows`` (``suite_row``), as taken; None when they hold none."""
    columns = _row_columns(resource)
    if column not in columns:
        return None
    at = columns.index(column)
    return [row[at] for row in rows]


def kind_of(suite: Suite, column: str) -> Kind:
    """How ``column`` comes out of an item (``Kind``); the derived columns are numbers."""
    return "num" if column in (AMOUNTS, UNKNOWN_PRODUCTS) else suite.shape.columns[column]


def _as_kind(kind: Kind, values: Sequence[Any]) -> list[Any]:
    """Values of a column of ``kind`` as the suite reads them (``column_values``)."""
    if kind == "id":
        return [None if v is None or v == "" else v for v in values]
    if kind == "text":
        return [v if type(v) is str else "" if v is None else str(v) for v in values]
    if kind == "num":
        return [v if type(v) is float and v == v else _number(v) for v in values]
    if kind == "ts":
        return [v if isinstance(v, str) else None for v in values]
    return list(values)


def column_values(suite: Suite, items: Sequence[Mapping[str, Any]],
                  columns: Collection[str], known: Mapping[str, set[str]] | None = None,
                  lines: ChunkLines | None = None,
                  rows: Sequence[Row] | None = None,
                  read: Mapping[str, list[Any]] | None = None) -> dict[str, list[Any]]:
    """``columns`` of each item as the suite reads them, before pandas types them
    (``typed``): ids with "" as None, text as ``str`` ("" when missing), numbers as floats
    or None, timestamps as their text (None when not text); ``AMOUNTS`` and
    ``UNKNOWN_PRODUCTS`` derived (the latter all None without ``known["products"]``).
    ``lines``: the items' lines (``ChunkLines``), when the caller has read them already;
    ``rows``: the items' ``suite_row``, when their read process took them (the items are
    not read); ``read``: top-level fields of the items the caller has read already, as
    ``item.get`` gives them.

    Each field wanted is read in a pass of its own over the items: a pass that read them
    all at once would make a list per item, and that costs more (2.4 against 1.4 µs an
    order for the seven fields of an order) than going over the chunk's items again.
    """
    values: dict[str, list[Any]] = {}
    plain = [c for c in suite.shape.columns if c in columns]
    if rows is not None:  # taken already, where the items were made
        at = {column: index for index, column in enumerate(suite.shape.columns)}
        taken = list(zip(*rows, strict=True)) if rows else []
        for column in plain:
            values[column] = _as_kind(suite.shape.columns[column],
                                      taken[at[column]] if taken else [])
        lines = row_lines(suite.resource, rows)
    else:
        given = read or {}
        fields = dict.fromkeys(c.split(".", 1)[0] for c in plain)
        fields_read = {f: given[f] if f in given else [item.get(f) for item in items]
                       for f in fields}
        for column in plain:
            first, *inner = column.split(".")
            found: Sequence[Any] = fields_read[first]
            for part in inner:  # a level at a time: one pass a level, not a walk an item
                found = [v.get(part) if isinstance(v, _MAPPING) else None for v in found]
            values[column] = _as_kind(suite.shape.columns[column], found)
    if AMOUNTS in columns and suite.shape.amounts:
        prefix = f"{LINES}[]."
        direct = [f for f in suite.shape.amounts if not f.startswith(prefix)]
        line_fields = [f.removeprefix(prefix) for f in suite.shape.amounts if f.startswith(prefix)]
        values[AMOUNTS] = [_amounts_min(item, direct, line_fields) for item in items]
    if UNKNOWN_PRODUCTS in columns and suite.shape.lines:
        products = None if known is None else known.get("products")
        if products is None:
            values[UNKNOWN_PRODUCTS] = [None] * len(items)
        else:
            if lines is None:
                lines = ChunkLines.read(items)
            values[UNKNOWN_PRODUCTS] = lines.unknown_counts(products)
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


def typed_frame(suite: Suite, keys: list[str], values: Mapping[str, list[Any]]) -> pd.DataFrame:
    """The columns ``values`` holds (``column_values``), typed (``typed``), indexed by the
    items' keys (an index named ``_key``).

    The keys are the index, not a column: GX names the rows breaking a rule by their
    ``_key`` (``plan.py``'s ``unexpected_index_column_names``), and from a column it looks
    each one up alone (``DataFrame.at``, ~60 µs a row), so that a chunk whose rows all
    broke a warning cost several times its other checks; from the index it takes them in
    one step."""
    import pandas as pd

    # a row per key even without columns; the keys set after, as given to the constructor
    # the typed Series (on a RangeIndex) would be aligned to them
    frame = pd.DataFrame({column: typed(kind_of(suite, column), found)
                          for column, found in values.items()}, index=pd.RangeIndex(len(keys)))
    frame.index = pd.Index(keys, name="_key", dtype=object)
    return frame


def item_frame(suite: Suite, items: Sequence[tuple[str, Mapping[str, Any]]],
               known: Mapping[str, set[str]] | None = None,
               columns: Collection[str] | None = None) -> pd.DataFrame:
    """One row per item: ``_key`` and the columns the rules read (``columns``; all of the
    suite's when None)."""
    wanted = set(suite.shape.columns) | {AMOUNTS, UNKNOWN_PRODUCTS} if columns is None else columns
    return typed_frame(suite, [key for key, _ in items],
                       column_values(suite, [item for _, item in items], wanted, known))


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
