"""The rows of one resource of a fake shop, as every platform's store keeps them: generated
rows by id, the fields tests patched through ``/__fake__`` (laid over the built record when
it is served), and views of the rows (sorted lists, bisect keys) kept until the next change.

What a row holds and how a missing one is refused (each platform's error) stay with the
platform; so do a store's own changes (what a patch or a new record sets)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar
from zoneinfo import ZoneInfo

from sandbox.shops.timeline import Clock


class HasId(Protocol):
    id: int


R = TypeVar("R", bound=HasId)
V = TypeVar("V")
T = TypeVar("T")
#: the views a table keeps at once (a fake answering many searches keeps the latest)
VIEWS_KEPT = 16


def like(pattern: str) -> re.Pattern[str]:
    """SQL's ``LIKE`` (``%`` any run, ``_`` one character), case-insensitive as MySQL's
    default collation is."""
    body = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(f"^{body}$", re.IGNORECASE | re.DOTALL)


def every(checks: Sequence[Callable[[T], bool]]) -> Callable[[T], bool]:
    """One predicate for all ``checks`` in order (chained calls: cheaper than ``all()``
    per row); no checks: everything passes."""
    if not checks:
        return lambda _: True
    combined = checks[0]
    for check in checks[1:]:
        combined = _both(combined, check)
    return combined


def _both(a: Callable[[T], bool], b: Callable[[T], bool]) -> Callable[[T], bool]:
    return lambda row: a(row) and b(row)


def either(checks: Sequence[Callable[[T], bool]]) -> Callable[[T], bool]:
    """One predicate for any of ``checks`` (at least one)."""
    if len(checks) == 1:
        return checks[0]
    return lambda row: any(check(row) for check in checks)


def window(keys: Sequence[Any], above: Any = None, below: Any = None, *,
           inclusive: bool = False) -> tuple[int, int]:
    """Where the run of sorted ``keys`` above ``above`` and below ``below`` starts and ends
    (None: no bound; ``inclusive``: the bounds belong to it), by bisect: a page of a window
    of a sorted view then costs the same in a large shop as in a small one."""
    start = 0 if above is None else (bisect_left if inclusive else bisect_right)(keys, above)
    stop = len(keys) if below is None else (bisect_right if inclusive else bisect_left)(keys, below)
    return start, stop


def merge(into: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` over ``into``, one level deep: an object patched onto an object of its kind
    keeps the keys the patch leaves out (a test patches ``billing.phone`` without losing the
    rest, or one language of PrestaShop's multilingual field without losing the others)."""
    for key, value in fields.items():
        old = into.get(key)
        if isinstance(old, dict) and type(old) is type(value):
            value = type(old)({**old, **value})
        into[key] = value
    return into


class Table(Generic[R]):
    """The rows of one resource, ``rows`` in ascending id, ``patches`` by id, and cached
    views. ``missing(name, id)`` is the platform's refusal of an unknown id; ``sort_keys``
    name the orders ``ordered`` knows."""

    def __init__(self, name: str, rows: Iterable[R], *,
                 missing: Callable[[str, int], Exception] | None = None,
                 sort_keys: Mapping[str, Callable[[R], Any]] | None = None) -> None:
        self.name = name
        self.rows: dict[int, R] = {r.id: r for r in sorted(rows, key=lambda r: r.id)}
        self.patches: dict[int, dict[str, Any]] = {}
        self.missing = missing
        self.sort_keys = sort_keys or {}
        self._views: dict[str, Any] = {}

    def row(self, record_id: int) -> R:
        found = self.rows.get(record_id)
        if found is None:
            if self.missing is None:
                raise KeyError(record_id)
            raise self.missing(self.name, record_id)
        return found

    def view(self, key: str, build: Callable[[], V]) -> V:
        """``build()``, kept until the next ``changed`` (the latest ``VIEWS_KEPT``)."""
        if key not in self._views:
            built = build()
            if len(self._views) >= VIEWS_KEPT:
                del self._views[next(iter(self._views))]
            self._views[key] = built
        return self._views[key]

    def ordered(self, by: str) -> list[R]:
        """The rows sorted by the ``by`` sort key."""
        return self.view(f"rows:{by}", lambda: sorted(self.rows.values(), key=self.sort_keys[by]))

    def keys(self, by: str) -> list[Any]:
        """The ``by`` column of ``ordered(by)``, for bisecting."""
        return self.view(f"keys:{by}", lambda: [getattr(r, by) for r in self.ordered(by)])

    def where(self, by: str, name: str, keep: Callable[[R], bool] | None,
              key: Callable[[R], Any] | None = None) -> tuple[list[R], list[Any]]:
        """``ordered(by)`` cut to the rows ``keep`` lets through (None: all; ``name`` tells
        filters apart), with their ``key`` (default: their ``by`` column) for bisecting:
        built once a change, so that a page of a filtered listing costs a bisect, not a scan
        of the shop."""
        def build() -> tuple[list[R], list[Any]]:
            rows = self.ordered(by) if keep is None else [r for r in self.ordered(by) if keep(r)]
            return rows, [getattr(r, by) for r in rows] if key is None else list(map(key, rows))
        return self.view(f"where:{by}:{name if keep else ''}", build)

    def changed(self) -> None:
        self._views.clear()

    def add(self, row: R) -> R:
        """Add a new row; the views are built again."""
        self.rows[row.id] = row
        self.changed()
        return row

    def save(self, record_id: int, fields: Mapping[str, Any]) -> None:
        """Keep fields a test patched, merged over those it patched before."""
        merge(self.patches.setdefault(record_id, {}), fields)

    def patched(self, record_id: int, built: dict[str, Any]) -> dict[str, Any]:
        """The built record with the fields tests patched laid over it."""
        return merge(built, self.patches.get(record_id, {}))


@dataclass(frozen=True)
class Span(Generic[V]):
    """The rows a listing matched, in order, without copying them: ``head`` (rows tested
    one by one) then ``rows[start:stop]`` (a run of a sorted view known to match). Its
    length is the listing's total; ``page`` cuts one page out of it."""

    rows: Sequence[V]
    start: int = 0
    stop: int | None = None
    head: Sequence[V] = ()

    def __len__(self) -> int:
        stop = len(self.rows) if self.stop is None else self.stop
        return len(self.head) + max(0, stop - self.start)

    def page(self, offset: int, count: int, *, descending: bool = False) -> list[V]:
        """``list(self)[offset:offset + count]``, of the reversed rows when ``descending``."""
        total = len(self)
        if descending:
            return self._cut(total - offset - count, total - offset)[::-1]
        return self._cut(offset, offset + count)

    def _cut(self, low: int, high: int) -> list[V]:
        low, high = max(low, 0), min(high, len(self))
        if low >= high:
            return []
        n = len(self.head)
        cut = list(self.head[low:high])
        if high > n:
            cut += self.rows[self.start + max(low - n, 0):self.start + high - n]
        return cut


@dataclass
class Generated:
    """What a platform's generator makes of a seed: the rows of each resource, and the
    products an order or a cart may hold, frozen at generation (so that old orders stay the
    same when a product is later edited or deleted)."""

    rows: dict[str, list[Any]] = field(default_factory=dict)
    sellable: list[Any] = field(default_factory=list)


class Shop(Clock):
    """A fake shop's state as every store keeps it: its settings, seed and timezone, one
    ``Table`` a resource (``table`` options: the platform's refusal and sort keys), the
    generated sellable products and each product's options (the ``options`` resource's rows
    by ``parent``), and records built by the platform's ``builders`` with the fields tests
    patched laid over them."""

    builders: ClassVar[Mapping[str, Callable[[Any, Any], dict[str, Any]]]]
    #: the resource whose rows are a product's options (variations, child products…)
    options: ClassVar[str]
    #: whether a deleted product takes its options along (Magento's child products stay)
    cascade: ClassVar[bool] = True
    #: the row attribute that says when a record last changed
    stamp: ClassVar[str] = "updated"
    #: whether a change of an option changes its product too (saving a variation saves
    #: its product)
    touches_product: ClassVar[bool] = False

    def __init__(self, settings: Any, generated: Generated, **table: Any) -> None:
        self.settings = settings
        self.seed: int = settings.seed
        self.tz = ZoneInfo(settings.timezone)
        self.tables = {name: Table(name, made, **table) for name, made in generated.rows.items()}
        self.sellable = generated.sellable
        #: product id -> the ids of its options, in id order
        self.children: dict[int, list[int]] = defaultdict(list)
        for row in self.tables[self.options].rows.values():
            if row.parent:
                self.children[row.parent].append(row.id)

    def record(self, resource: str, row: Any) -> dict[str, Any]:
        return self.tables[resource].patched(row.id, self.builders[resource](self, row))

    def changed(self, resource: str) -> None:
        """Drop what was kept of ``resource``'s rows (its table's views) after a change."""
        self.tables[resource].changed()

    def touch(self, resource: str, record_id: int, at: int | None = None) -> Any:
        """Mark a record changed at ``at`` (None: now), and its product with it when an
        option ``touches_product`` (an unknown id: the table's refusal)."""
        row = self.tables[resource].row(record_id)
        self.undated(resource)
        setattr(row, self.stamp, self.now() if at is None else at)
        self.changed(resource)
        if self.touches_product and resource == self.options \
                and row.parent in self.tables["products"].rows:
            self.touch("products", row.parent, getattr(row, self.stamp))
        return row

    def undated(self, resource: str) -> None:
        """Refuse to touch a resource without dates (the platform's error; default: all
        have dates)."""

    def next_id(self, resource: str, after: int = 0) -> int:
        return max(self.tables[resource].rows, default=after) + 1

    def remove(self, resource: str, record_id: int) -> Any:
        """Delete a record for good, with its patches (an unknown id: the table's refusal):
        a product with its options (``cascade``), an option from its product's."""
        table = self.tables[resource]
        row = table.row(record_id)
        del table.rows[record_id]
        table.patches.pop(record_id, None)
        self.changed(resource)
        dropped = self.children.pop(record_id, []) if resource == "products" else []
        if self.cascade and dropped:
            for option in dropped:
                self.tables[self.options].rows.pop(option, None)
            self.changed(self.options)
        if resource == self.options and record_id in self.children.get(row.parent, ()):
            self.children[row.parent].remove(record_id)
        return row
