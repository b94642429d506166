"""One statement over many rows (``executemany``) at SQLite's pace rather than SQLAlchemy's.

``Connection.execute(statement, rows)`` builds and processes each row's parameters in
general code (``construct_params``, then every bind processor): about three quarters of
the time the ledger takes to record a chunk of outcomes on SQLite, where the database's own
work is the smaller part. ``execute_many`` compiles the statement once for the rows'
columns and binds each row through the same bind processors (the stored values are the
same), processing an object repeated from the previous row once (a chunk's ``now``).
PostgreSQL, and rows whose columns differ, take SQLAlchemy's way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql.dml import Insert


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
        params.append((*bound, *constants))
    conn.exec_driver_sql(compiled.string, params)


def _processed(process: Callable[[Any], Any] | None, value: Any) -> Any:
    return value if process is None or value is None else process(value)
