"""One statement over many rows (``executemany``) at SQLite's pace rather than SQLAlchemy's.

``Connection.execute(statement, rows)`` builds and processes each row's parameters in
general code (``construct_params``, then every bind processor): about three quarters of
the time the ledger takes to record a chunk of outcomes on SQLite, where the database's own
work is the smaller part. ``execute_many`` compiles the statement once for the rows'
columns and binds each row through the same bind processors (the stored values are the
same), processing an object repeated from the previous row once (a chunk's ``now``), and
sends the rows as a few statements of many rows each (``_insert_rows``). PostgreSQL, and
rows whose columns differ, take SQLAlchemy's way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql.dml import Insert

#: parameters in one statement at most (SQLite's own limit, ``SQLITE_LIMIT_VARIABLE_NUMBER``,
#: is 32 766 since 3.32, 999 before: the lower of the two is used)
VARIABLES = 32_766


def execute_many(conn: Connection, statement: Insert, rows: Sequence[dict[str, Any]]) -> None:
    """``conn.execute(statement, rows)``, faster on SQLite; every row has the same keys."""
    keys = rows[0].keys() if rows else None
    if conn.dialect.name != "sqlite" or keys is None or any(r.keys() != keys for r in rows):
        conn.execute(statement, list(rows))
        return
    compiled = statement.compile(dialect=conn.dialect, column_keys=list(keys))
    names: Sequence[str] = compiled.positiontup or ()
    # SQLAlchemy's own bind processors (a private name: a version without it takes its way)
    binds: dict[str, Any] | None = getattr(compiled, "_bind_processors", None)
    if binds is None:
        conn.execute(statement, list(rows))
        return
    processors: dict[str, Callable[[Any], Any]] = {
        name: process for name, process in binds.items() if callable(process)}
    columns = [name for name in names if name in keys]
    if (len(columns) != len(keys) or list(names[:len(columns)]) != columns
            or len(processors) != len(binds)):
        conn.execute(statement, list(rows))  # not the plain INSERT … VALUES it expects
        return
    # the statement's own parameters (ON CONFLICT's statuses and numbers): the same each row
    own = compiled.construct_params(rows[0])
    constants = tuple(_processed(processors.get(name), own[name])
                      for name in names[len(columns):])
    values = itemgetter(*columns) if len(columns) > 1 else lambda row: (row[columns[0]],)
    processed = [(index, processors[name]) for index, name in enumerate(columns)
                 if name in processors]
    params = []
    last: dict[int, tuple[Any, Any]] = {}  # column -> (its previous value, processed)
    for row in rows:
        bound = list(values(row))
        for index, process in processed:
            value = bound[index]
            if value is None:
                continue
            previous = last.get(index)
            if previous is not None and previous[0] is value:
                bound[index] = previous[1]
            else:
                bound[index] = result = process(value)
                last[index] = (value, result)
        params.append(bound)
    _insert_rows(conn, compiled.string, len(columns), params, constants)


def _insert_rows(conn: Connection, sql: str, width: int, rows: list[list[Any]],
                 constants: tuple[Any, ...]) -> None:
    """``rows`` inserted by statements of many rows each (``VALUES (…), (…), …``), not one
    statement a row: SQLite's module lets the GIL go around each statement's step and takes
    it back after, and a thread recording beside a busy event loop waits for it each time
    (measured: 200 000 outcomes in 84 s beside a busy thread instead of 3.7 s alone). Each
    row still sees the rows before it, as executemany's would."""
    group = "(" + ", ".join("?" * width) + ")"
    one = f"VALUES {group}"
    if one not in sql:  # not the plain INSERT … VALUES it expects
        conn.exec_driver_sql(sql, [(*row, *constants) for row in rows])
        return
    limit = min(VARIABLES, conn.connection.dbapi_connection.getlimit(  # type: ignore[union-attr]
        sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    per = max(1, (limit - len(constants)) // width)
    for start in range(0, len(rows), per):
        batch = rows[start:start + per]
        values = "VALUES " + ", ".join([group] * len(batch))
        flat = [value for row in batch for value in row]
        flat.extend(constants)
        conn.exec_driver_sql(sql.replace(one, values, 1), tuple(flat))


def _processed(process: Callable[[Any], Any] | None, value: Any) -> Any:
    return value if process is None or value is None else process(value)
