"""What the poison-row tests share: generated good and bad rows (wrong types, huge and
tiny numbers, NaN and Infinity, deep nesting, long cells, odd unicode and bytes, duplicated
and huge ids, dates at and past the edges), the rows issue 10 names, and the accounting of
a run and its rerun: every row sent and stored at the destination, quarantined with a
reason in the ledger, or superseded by a later row with the same key, within a bound.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from pipelines.engine.plan import SETTLE
from pipelines.engine.state import ItemStatus, LedgerEntry
from pipelines.engine.stream_report import StreamReport
from tests.engine.support import EngineSetup

#: seconds one run may take, far above what it takes (a second or two): only a hang fails
RUN_BOUND = 60.0
#: the engine_setup factory is called once per example, so the fixture's scope is harmless
PER_EXAMPLE = settings(max_examples=15,
                       suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELDS = ("id", "name", "description", "price", "stock", "active", "created_at")
#: where a run reads and maps: in its own process, or in a process of its own
#: (``tuning.read_process``), where each item is also prechecked, encoded and pickled
READING = pytest.mark.parametrize("read_process", [False, True], ids=["inline", "apart"])
#: seconds a whole property may take: each run is bounded by RUN_BOUND (a hang fails there),
#: and a property runs up to 18 examples of two runs, each reading in a process that starts
#: twice; pytest's default (120 s) was reached on a slow two-core machine
PROPERTY_BOUND = pytest.mark.timeout(1800)
#: generated rows that went through a run, over the poison-row modules (printed at the end
#: of test_poison_rows_woocommerce.py, the last of them)
GENERATED = {"rows": 0}


@dataclass(frozen=True)
class Raw:
    """A value written as this exact JSON text (a token Python's json cannot write)."""

    text: str


@dataclass(frozen=True)
class Bytes:
    """A cell written as these exact bytes (not UTF-8)."""

    data: bytes


def nested(depth: int) -> Raw:
    return Raw("[" * depth + "1" + "]" * depth)


EDGE_TEXT = (
    "²", "١٢٣", "１２", "\x00", "\ufeff17", "17\n", " 17 ", "\u202e", "🛒🛒🛒", "e\u0301",
    "NaN", "Infinity", "-Infinity", "1e10000000", "-1e10000000", "1e-400", "-0",
    "99999999999999999999", "-99999999999999999999", "0x1F", "1_000", "",
    "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59.999999",
    "10000-01-01T00:00:00", "2024-02-30T00:00:00", "0000-00-00 00:00:00", "2024-05-01Z",
    "[" * 1000 + "]" * 1000, '{"a": ' * 50 + "1" + "}" * 50,
)
LONG_TEXT = ("x" * 200_000, "é" * 70_000, "\n" * 3 + "y" * 1000)
EDGE_INTS = (2**63, 2**63 - 1, -(2**63) - 1, 2**64, 10**20, 99999999999999999999, -1, 0)

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
                      st.floats(allow_nan=False, allow_infinity=False),
                      st.text(st.characters(exclude_categories=["Cs"]), max_size=20))
json_values = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=8)
#: bad values any source can carry (Python values; Raw for JSON tokens, Bytes for bytes)
bad_value = st.one_of(
    st.sampled_from(EDGE_TEXT),
    st.sampled_from(LONG_TEXT),
    st.sampled_from(EDGE_INTS),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(),  # NaN and the infinities included
    st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e10000000"),
                     Raw("-1e400"), Raw("1e-400"), Raw("123456789012345678901234567890")]),
    st.integers(min_value=1, max_value=1500).map(nested),
    st.sampled_from([Bytes(b"\xff\xfe"), Bytes(b"caf\xe9"), Bytes(b"\xc3\x28")]),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    json_values,
)


@dataclass
class Row:
    """One input row: its columns and a tag (in ``sku``, never made bad) to find it by."""

    tag: str
    values: dict[str, Any]

    @property
    def id(self) -> Any:
        return self.values.get("id")


def good_values(number: int, identifier: int) -> dict[str, Any]:
    return {"id": identifier, "name": f"Product {number}", "description": "A good product",
            "price": "12.50", "stock": 3, "active": "true",
            "created_at": "2025-01-02T03:04:05+00:00"}


Good = Callable[[int, int], dict[str, Any]]


@st.composite
def rows(draw: st.DrawFn, *, values: st.SearchStrategy[Any] = bad_value,
         fields: Sequence[str] = FIELDS, good: Good = good_values) -> list[Row]:
    """Good rows with bad ones among them (1 to 3 of ``fields`` made bad); ids mostly
    distinct, sometimes repeated."""
    count = draw(st.integers(min_value=2, max_value=10))
    out: list[Row] = []
    for number in range(count):
        identifier = 1000 + number
        if out and draw(st.integers(0, 9)) == 0:  # a duplicated id: the later row wins
            identifier = draw(st.sampled_from([r.id for r in out]))
        row = Row(f"<row-{number}>", good(number, identifier))
        if draw(st.booleans()):
            for name in draw(st.lists(st.sampled_from(fields), min_size=1, max_size=3,
                                      unique=True)):
                row.values[name] = draw(values)
        out.append(row)
    GENERATED["rows"] += len(out)
    return out


# accounting --------------------------------------------------------------------------


def key_of(value: Any) -> str | None:
    """A row's key as far as the test can tell: ids that read as the same integer, or as
    the same text, are one key (over-merging only makes the check weaker, never wrong)."""
    if value is None or isinstance(value, Raw | Bytes):
        return None if value is None else repr(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    try:
        number = Decimal(text.replace(" ", "").replace("_", ""))
        if number.is_finite() and abs(number) < 10**30 and number == number.to_integral_value():
            return str(int(number))
    except (InvalidOperation, ValueError):
        pass
    return text


@dataclass
class Ledger:
    """What the ledger holds for the products resource, searchable by tag and origin."""

    entries: list[LedgerEntry]
    texts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.texts = [
            " ".join([e.source_record_id or "", *e.errors,
                      orjson.dumps(e.payload, option=orjson.OPT_NON_STR_KEYS).decode()
                      if e.payload else ""])
            for e in self.entries]

    def quarantined(self, tag: str, record_id: str | None) -> bool:
        """A quarantined entry with a reason, for the row tagged ``tag`` (in its payload)
        or for the source record ``record_id`` (a shop's id, a file's ``file:line``)."""
        return any(e.status is ItemStatus.QUARANTINED and any(e.errors)
                   and (tag in text or (record_id is not None
                                        and e.source_record_id == record_id))
                   for e, text in zip(self.entries, self.texts, strict=True))


def assert_accounted_for(inputs: Sequence[Row], stored_tags: set[str], ledger: Ledger,
                         origins: dict[str, str] | None = None) -> None:
    """Every row is stored, quarantined with a reason, or superseded by a later row with
    the same key (rows in the order the source reads them; ``origins``: tag -> the record
    id the source gives a row, where the test knows it)."""
    lost = []
    for index, row in enumerate(inputs):
        if row.tag in stored_tags:
            continue
        if ledger.quarantined(row.tag, (origins or {}).get(row.tag)):
            continue
        if any(key_of(later.id) == key_of(row.id) for later in inputs[index + 1:]):
            continue
        lost.append((row.tag, {k: (v if len(repr(v)) < 80 else repr(v)[:80] + "…")
                               for k, v in row.values.items()}))
    assert not lost, f"rows neither stored, quarantined nor superseded: {lost}"


def bounded(run: Callable[[], list[StreamReport]]) -> list[StreamReport]:
    """``run()`` in a thread, failing the test if it has not finished within RUN_BOUND
    (a hang in a C call cannot be interrupted, so it is waited for, not cancelled)."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["reports"] = run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(RUN_BOUND)
    assert not thread.is_alive(), f"the run did not finish within {RUN_BOUND} s"
    if "error" in result:
        raise result["error"]
    return result["reports"]


def product_ledger(setup: EngineSetup, source: str) -> Ledger:
    statuses = set(ItemStatus)
    return Ledger(setup.state.entries(source, "products", statuses))


def stored_tags(setup: EngineSetup) -> set[str]:
    return {str(p.get("reference")) for p in setup.listed("/products")}


def run_twice_and_account(setup: EngineSetup, source: str, inputs: Sequence[Row],
                          origins: dict[str, str] | None = None,
                          stored: Callable[[], set[str]] | None = None) -> None:
    """A run, then a rerun over the same source: no exception, both within the bound,
    every row accounted for, nothing new sent the second time. ``stored``: the tags of
    the rows the destination holds (default: products by their ``reference``)."""
    bounded(setup.run)
    tags = stored() if stored is not None else stored_tags(setup)
    assert_accounted_for(inputs, tags, product_ledger(setup, source), origins)
    accepted = setup.accepted()
    setup.clock.advance(SETTLE)

    again = bounded(setup.run)

    assert sum(r.total("pushed") for r in again) == 0
    assert setup.accepted() == accepted


PRODUCT_COLUMNS = {"product_id": "id", "name": "name", "description": "description",
                   "price": "price", "quantity_remaining": "stock", "is_active": "active",
                   "created_at": "created_at", "reference": "sku"}


def issue_rows(*bad: dict[str, Any]) -> list[Row]:
    """A good row, then rows with the issue's bad values, then another good row."""
    out = [Row("<row-0>", good_values(0, 1000))]
    for number, values in enumerate(bad, start=1):
        out.append(Row(f"<row-{number}>", {**good_values(number, 1000 + number), **values}))
    out.append(Row(f"<row-{len(out)}>", good_values(len(out), 1000 + len(out))))
    return out


#: the poison rows issue 10 names, as they come from a file (and below, a database)
ISSUE_ROWS = issue_rows(
    {"id": "1²"},
    {"stock": 99999999999999999999},
    {"description": nested(1000)},
    {"created_at": "9999-12-31T23:59:59-14:00"},
    {"stock": Raw("1e10000000")},
    {"stock": "1e10000000"},
)
