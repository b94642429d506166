"""Poison rows through the SQL source (SQLite, whose columns hold any type): whatever one
row holds, the run finishes within a bound, every row is accounted for, and a rerun sends
nothing new. The examples from issue 10 always run (``@example``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given

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
    rows,
    run_twice_and_account,
)
from tests.engine.support import EngineSetup, MakeSetup

# the SQL source ---------------------------------------------------------------------------

SQL_SOURCE = "db"
SQL_STREAM = {"table": "products", "key": "id", "cursor": "updated_at",
              "columns": PRODUCT_COLUMNS,
              "templates": {"link": "https://shop.example/p/{id}"}}


def sql_value(value: Any) -> Any:
    """What SQLite can hold of a value (any type in any column): text for what it cannot."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Bytes):
        return value.data
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def write_database(path: Path, inputs: Sequence[Row]) -> None:
    start = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    with sqlite3.connect(path) as db:
        # columns without a type: SQLite keeps every value as given
        db.execute("CREATE TABLE products (id, name, description, price, stock, active,"
                   " created_at, updated_at, sku)")
        for number, row in enumerate(inputs):
            values = [sql_value(row.values.get(f)) for f in FIELDS]
            changed = (start + timedelta(seconds=number)).strftime("%Y-%m-%d %H:%M:%S")
            db.execute("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [*values, changed, row.tag])
    db.close()


@dataclass
class SqlSetup(EngineSetup):
    path: Path


@READING
@PROPERTY_BOUND
@given(inputs=rows())
@example(inputs=ISSUE_ROWS)
@PER_EXAMPLE
def test_a_database_of_poison_rows_is_synced_row_by_row(
        engine_setup: MakeSetup, tmp_path_factory: pytest.TempPathFactory,
        inputs: list[Row], read_process: bool) -> None:
    path = tmp_path_factory.mktemp("db") / "shop.db"
    write_database(path, inputs)
    setup = engine_setup(SqlSetup, {
        "name": SQL_SOURCE, "platform": "sql",
        # the rerun reads every row again: none of them may stop it either
        "lookback_seconds": 400 * 24 * 3600, "tuning": {"read_process": read_process},
        "connection": {"url": f"sqlite:///{path}", "options": {"timezone": "UTC"},
                       "streams": {"products": SQL_STREAM}}}, path=path)

    run_twice_and_account(setup, SQL_SOURCE, inputs)
