"""Poison rows through the file drop (JSON Lines and CSV): whatever one row holds, the
run finishes within a bound, every row is accounted for, and a rerun sends nothing new. The
examples from issue 10 always run (``@example``).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.engine.poison_support import (
    FIELDS,
    ISSUE_ROWS,
    PER_EXAMPLE,
    PRODUCT_COLUMNS,
    PROPERTY_BOUND,
    READING,
    Bytes,
    Raw,
    Row,
    good_values,
    issue_rows,
    rows,
    run_twice_and_account,
)
from tests.engine.support import EngineSetup, MakeSetup

# the file drop ---------------------------------------------------------------------------

FILES_SOURCE = "drop"


FILES_STREAM = {"key": "id", "columns": PRODUCT_COLUMNS,
                "templates": {"link": "https://shop.example/p/{id}"}}


def json_text(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Bytes):
        return '"\x00BYTES' + value.data.hex() + '\x00"'
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return json.dumps(value)  # NaN, Infinity: not JSON, which the line must survive
    return json.dumps(value, ensure_ascii=False)


def with_bytes(text: str) -> bytes:
    """The file's bytes: UTF-8, with each Bytes placeholder replaced by its raw bytes."""
    out = text.encode("utf-8", errors="surrogatepass")
    while (start := out.find(b"\x00BYTES")) >= 0:
        end = out.index(b"\x00", start + 1)
        out = out[:start] + bytes.fromhex(out[start + 6:end].decode()) + out[end + 1:]
    return out


def jsonl_file(inputs: Sequence[Row], name: str) -> tuple[bytes, dict[str, str]]:
    lines, origins = [], {}
    for number, row in enumerate(inputs, start=1):
        values = {**row.values, "sku": row.tag}
        lines.append("{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}"
                                     for k, v in values.items()) + "}")
        origins[row.tag] = f"products/{name}:{number}"
    return with_bytes("\n".join(lines) + "\n"), origins


def csv_cell(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Bytes):
        return "\x00BYTES" + value.data.hex() + "\x00"
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def line_breaks(text: str) -> int:
    """Lines as the csv module counts them (each of \\r\\n, \\r and \\n ends one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def csv_file(inputs: Sequence[Row], name: str) -> tuple[bytes, dict[str, str]]:
    columns = [*FIELDS, "sku"]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(columns)
    origins = {}
    for row in inputs:
        origins[row.tag] = f"products/{name}:{line_breaks(buffer.getvalue()) + 1}"
        values = {**row.values, "sku": row.tag}
        writer.writerow([csv_cell(values.get(c)) for c in columns])
    return with_bytes(buffer.getvalue()), origins


@dataclass
class FilesSetup(EngineSetup):
    root: Path


DropFile = tuple[str, list[Row]]


def in_file(index: int, file_rows: list[Row]) -> list[Row]:
    """The rows of a drop's file ``index``, tagged apart from every other file's: a tag
    must name one row of the drop, or its origin (``file:line``) is overwritten by another
    file's and its product stands in for another row's."""
    return [Row(f"<file-{index}-{row.tag[1:]}", row.values) for row in file_rows]


@st.composite
def drops(draw: st.DrawFn) -> list[DropFile]:
    """One to three files, each JSON Lines or CSV, of good and bad rows."""
    files = []
    for index in range(draw(st.integers(1, 3))):
        fmt = draw(st.sampled_from(["jsonl", "csv"]))
        files.append((f"products-{index}.{fmt}", in_file(index, draw(rows()))))
    return files


#: two files, the first with a line that is not JSON (an id ``NaN``: quarantined as
#: ``products-0.jsonl:2``), the second with rows in the same places, each replacing the one
#: before (found by hypothesis when each file's rows were tagged ``<row-N>`` alike: the
#: quarantined line's origin was the second file's, and nothing stored its tag)
TWO_FILES = [("products-0.jsonl", in_file(0, issue_rows({"id": Raw("NaN")}))),
             ("products-1.jsonl",
              in_file(1, [Row(f"<row-{n}>", good_values(n, 1000)) for n in range(3)]))]


@READING
@PROPERTY_BOUND
@given(files=drops())
@example(files=[("products-0.jsonl", ISSUE_ROWS)])
@example(files=[("products-0.csv", ISSUE_ROWS)])
@example(files=TWO_FILES)
@PER_EXAMPLE
def test_a_file_drop_of_poison_rows_is_synced_row_by_row(
        engine_setup: MakeSetup, tmp_path_factory: pytest.TempPathFactory,
        files: list[DropFile], read_process: bool) -> None:
    root = tmp_path_factory.mktemp("drop")
    folder = root / "products"
    folder.mkdir()
    inputs: list[Row] = []
    origins: dict[str, str] = {}
    moment = datetime(2025, 6, 1, tzinfo=UTC)
    for index, (name, file_rows) in enumerate(files):
        maker = jsonl_file if name.endswith(".jsonl") else csv_file
        data, where = maker(file_rows, name)
        path = folder / name
        path.write_bytes(data)
        stamp = (moment + timedelta(minutes=index)).timestamp()
        os.utime(path, (stamp, stamp))  # files are read in the order they arrived
        inputs += file_rows
        origins |= where
    assert len(origins) == len(inputs), "each row of a drop needs a tag of its own"
    setup = engine_setup(FilesSetup, {
        "name": FILES_SOURCE, "platform": "files", "tuning": {"read_process": read_process},
        "connection": {"path": str(root), "options": {"timezone": "UTC"},
                       "streams": {"products": FILES_STREAM}}}, root=root)

    run_twice_and_account(setup, FILES_SOURCE, inputs, origins)
