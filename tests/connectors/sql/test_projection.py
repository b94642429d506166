"""A stream's projection, its configuration read once (``Projection``), gives each row the
fields that looking up, normalizing and setting each configured column one by one gives —
whatever the row holds: timestamps naive or zoned, dates, bytes, nested objects, paths that
lead nowhere, lines as a list or as JSON text — and a timestamp it has seen before, or one
of an hour it has seen, the same answer as parsing it."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.sources.exact import loads as exact_loads
from connectors.sources.sql import projection
from connectors.sources.sql.columns import (
    LinesSpec,
    StreamSpec,
    iso,
    lookup,
    normalize,
    set_path,
    zone,
)
from connectors.sources.sql.connector import _changed_at
from connectors.sources.sql.projection import Projection
from connectors.sources.sql.query import Plan

PARIS = zone("Europe/Paris")
SPEC = StreamSpec.model_validate({
    "key": "id", "cursor": "changed",
    "columns": {"order_id": "id", "customer.email": "buyer.mail", "customer.since": "buyer.since",
                "amount": "total", "created_at": "created", "note": "note",
                "customer": "buyer.id"},
    "constants": {"is_confirmed": True},
    "lines": {"column": "items", "columns": {"product_id": "sku", "at": "when"},
              "constants": {"price": 0}},
})

TIMESTAMPS = st.sampled_from([
    "2024-01-15 08:30:00", "2024-01-15T08:30:00.250-05:00", "2024-10-27 02:30:00",
    "2024-03-31T02:30:00", "2025-01-04T13:04:08+01:00", "9999-12-31T23:59:59-02:00",
    " 2024-01-15 08:30 ", "2024-01-15T08:30:00Z", "1990-05-01", "2024-01-15 08:30:00 x",
    "２０２４-01-15 08:30:00"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    | TIMESTAMPS | st.binary(max_size=6) | st.decimals(allow_nan=False, places=2)
    | st.datetimes(timezones=st.sampled_from([None, UTC, PARIS])) | st.dates(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                  max_size=3),
    max_leaves=6)
LINE = st.dictionaries(st.sampled_from(["sku", "when", "x"]), VALUES, max_size=3)
ROWS = st.fixed_dictionaries({"id": VALUES}, optional={
    "total": VALUES, "created": VALUES | TIMESTAMPS, "changed": VALUES | TIMESTAMPS,
    "note": VALUES, "buyer": st.dictionaries(st.sampled_from(["mail", "since", "id"]),
                                             VALUES | TIMESTAMPS, max_size=3) | VALUES,
    "buyer.mail": VALUES,
    # lines as JSON text: the standard library's, which writes integers past 64 bits too
    "items": st.lists(LINE, max_size=3) | st.lists(LINE, max_size=2).map(
        lambda lines: json.dumps(lines, default=str)) | VALUES})


def cell_by_cell(spec: StreamSpec, row: dict[str, Any]) -> dict[str, Any]:
    """The specification: each configured column looked up, normalized and set in turn."""
    record: dict[str, Any] = {}
    for target, column in spec.columns.items():
        set_path(record, target, normalize(lookup(row, column)[1], PARIS))
    if spec.cursor and "updated_at" not in spec.columns:
        record.setdefault("updated_at", normalize(lookup(row, spec.cursor)[1], PARIS))
    for target, value in spec.constants.items():
        set_path(record, target, value)
    if spec.lines is not None and spec.lines.column:
        set_path(record, spec.lines.field, lines_cell_by_cell(spec.lines, row.get("items")))
    return record


def lines_cell_by_cell(spec: LinesSpec, value: Any) -> Any:
    if isinstance(value, str | bytes):
        try:
            value = exact_loads(value)
        except orjson.JSONDecodeError:
            return value
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return value
    lines = []
    for element in value:
        line: dict[str, Any] = {}
        for target, column in spec.columns.items():
            set_path(line, target, normalize(lookup(element, column)[1], PARIS))
        for target, constant in spec.constants.items():
            set_path(line, target, constant)
        lines.append(line)
    return lines


def outcome(call: Any) -> Any:
    try:
        return ("fields", call())
    except Exception as exc:  # noqa: BLE001 - a row's error is part of its outcome
        return ("error", type(exc).__name__)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(ROWS, min_size=1, max_size=4))
def test_a_projection_gives_each_row_what_its_cells_one_by_one_give(rows):
    project = Projection(SPEC, PARIS)
    for row in [*rows, *rows]:  # twice: the second time from what it remembered
        assert outcome(lambda row=row: project(row)) == outcome(lambda row=row: cell_by_cell(SPEC, row))


ZONED = st.builds(
    lambda moment, hours, minutes, separator: moment.replace(tzinfo=timezone(
        timedelta(hours=hours, minutes=minutes) if hours >= 0 else
        -timedelta(hours=-hours, minutes=minutes))).isoformat(separator),
    st.datetimes(), st.integers(-23, 23), st.sampled_from([0, 0, 30, 45]),
    st.sampled_from(["T", " "]))


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(ZONED | ZONED.map(lambda text: text[:14] + "6" + text[15:]), max_size=6))
def test_zoned_timestamps_come_out_as_normalize_gives_them(texts):
    """The commonest text, a time with its offset, is answered from its hour's answer when
    the offset is whole hours: the same as parsing it, to the year 1 and 9999 and minutes
    that are no minutes."""
    project = Projection(SPEC, PARIS)
    for text in [*texts, *texts]:
        assert project({"id": 1, "created": text})["created_at"] == normalize(text, PARIS)


def test_what_a_projection_remembers_is_bounded_and_gives_the_same_answers(monkeypatch):
    monkeypatch.setattr(projection, "_REMEMBERED", 3)
    project = Projection(SPEC, PARIS)
    times = [f"2024-0{month}-15 08:30:00" for month in range(1, 8)]
    first = [project({"id": 1, "created": t})["created_at"] for t in times]
    again = [project({"id": 1, "created": t})["created_at"] for t in times]
    assert first == again == [normalize(t, PARIS) for t in times]
    assert len(project.texts) <= 3
    assert len(project.texts.hours) <= 3
    assert first[0] == "2024-01-15T07:30:00+00:00"


def test_values_a_projection_takes_as_they_are():
    row = {"id": 7, "total": Decimal("12.30"), "created": date(1990, 5, 1),
           "changed": datetime(2024, 7, 1, 12, 0), "buyer": {"mail": b"a\xff"}}
    assert Projection(SPEC, PARIS)(row) == cell_by_cell(SPEC, row)


#: zones whose offsets change by an hour, by half an hour (Lord Howe), or are not whole hours
ZONES = [zone(name) for name in ("Europe/Paris", "Australia/Lord_Howe", "Asia/Kolkata",
                                 "America/St_Johns", "America/Sao_Paulo", "UTC")]
#: local times near their zones' changes of offset, and at the calendar's ends
NAIVE = st.builds(
    lambda moment, width, separator: moment.isoformat(separator)[:19] + (
        "" if width == 0 else f".{moment.microsecond:06d}"[:width + 1]),
    st.one_of(st.datetimes(), st.sampled_from([
        datetime(2024, 10, 27, 2, 30, 15), datetime(2024, 3, 31, 2, 59, 59),
        datetime(2024, 4, 7, 1, 45), datetime(2024, 10, 6, 2, 15), datetime(1, 1, 1, 0, 30),
        datetime(9999, 12, 31, 23, 30), datetime(2024, 2, 17, 23, 59, 59, 999000)])
        | st.datetimes(datetime(2024, 1, 1), datetime(2025, 1, 1))),
    st.sampled_from([0, 3, 6]), st.sampled_from(["T", " "]))


@settings(max_examples=500, deadline=None)
@given(texts=st.lists(NAIVE | NAIVE.map(lambda text: text[:14] + "6" + text[15:]), max_size=6),
       tz=st.sampled_from(ZONES))
def test_local_timestamps_come_out_as_normalize_gives_them(texts, tz):
    """Naive text, read in the source's zone, is answered from its hour's answer when the
    zone is whole hours off UTC through that hour: the same as parsing it, in hours whose
    offset changes, in zones half an hour off, at the calendar's ends."""
    project = Projection(SPEC, tz)
    for text in [*texts, *texts]:
        assert project({"id": 1, "created": text})["created_at"] == normalize(text, tz)


@pytest.mark.parametrize(("kind", "zoned"), [("sqlite_text", False), ("sqlite_text", True),
                                             ("native", False), ("epoch", False)])
def test_a_change_time_reads_as_the_plan_reads_it(kind, zoned):
    """A row's change time in text is taken from its local hour's answer where the plan
    reads text as local time: the same text as the plan's moment, or the same error."""
    plan = Plan("orders", "orders AS src", "src.id", "src.changed", kind, zoned, True, "", PARIS)
    project = Projection(SPEC, PARIS)
    for value in ["2024-10-27 02:30:15.000", "2024-10-27 03:30:15.250", "2024-03-31 02:30:00",
                  "2024-05-01T10:00:00.123456", "2024-05-01 10:00:00+02:00", "1714550400",
                  "not a time", "2024-02-30 10:00:00.000", datetime(2024, 5, 1, 10, 0), 1714550400]:
        assert outcome(lambda v=value: _changed_at(plan, project, v)) \
            == outcome(lambda v=value: iso(plan.moment(v))), value
