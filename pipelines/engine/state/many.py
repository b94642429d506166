"""One statement over many rows (``executemany``) at SQLite's pace rather than SQLAlchemy's.

``Connection.execute(statement, rows)`` builds and processes each row's parameters in
general code (``construct_params``, then every bind processor): about three quarters of
the time the ledger takes to record a chunk of outcomes on SQLite, where the database's own
work is the smaller part. ``execute_many`` takes the rows as columns (a list of values
each, built a chunk at a time, and the values every row shares), compiles the statement
once for each set of columns (``_plan``), binds a column at a time through the same bind
processors (the stored values are the same), processing each distinct object of a column
once (a chunk's ``now``, the errors rows share), and sends the rows as a few statements of
many rows each (``_insert_rows``). PostgreSQL takes SQLAlchemy's way, with rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from operator import is_
from typing import Any

from sqlalchemy import Connection, Dialect
from sqlalchemy.sql.dml import Insert

#: parameters in one statement at most (SQLite's own limit, ``SQLITE_LIMIT_VARIABLE_NUMBER``,
#: is 32 766 since 3.32, 999 before: the lower of the two is used)
VARIABLES = 32_766


@dataclass(frozen=True)
class _Plan:
    """A statement compiled for one set of columns, and how to bind rows of them."""

    sql: str
    #: the columns, in the statement's order
    names: tuple[str, ...]
    #: the bind processor of each column that has one
    processors: Mapping[str, Callable[[Any], Any]]
    #: the statement's own parameters (ON CONFLICT's statuses and numbers), processed
    constants: tuple[Any, ...]


def execute_many(conn: Connection, statement: Insert, columns: Mapping[str, Sequence[Any]],
                 shared: Mapping[str, Any]) -> None:
    """``conn.execute(statement, rows)``, faster on SQLite, for the rows made of
    ``columns`` (each a value a row) and ``shared`` (each one value for every row)."""
    count = len(next(iter(columns.values())))
    if not count:
        return
    plan = _plan(statement, (*columns, *shared), conn.dialect) if (
        conn.dialect.name == "sqlite") else None
    if plan is None:
        conn.execute(statement, _rows(columns, shared))
        return
    bound: list[Sequence[Any]] = []
    for name in plan.names:
        process = plan.processors.get(name)
        if name in shared:
            bound.append([_processed(process, shared[name])] * count)
        else:
            bound.append(columns[name] if process is None else _bound(process, columns[name]))
    _insert_rows(conn, plan.sql, bound, plan.constants)


def _rows(columns: Mapping[str, Sequence[Any]], shared: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of ``columns`` and ``shared``, as SQLAlchemy takes them."""
    names = list(columns)
    return [{**shared, **dict(zip(names, values, strict=True))}
            for values in zip(*columns.values(), strict=True)]


@lru_cache(maxsize=32)
def _plan(statement: Insert, keys: tuple[str, ...], dialect: Dialect) -> _Plan | None:
    """``statement`` compiled for rows of ``keys``; None unless it is the plain INSERT …
    VALUES (its columns first, then its own parameters) that ``execute_many`` expects."""
    compiled = statement.compile(dialect=dialect, column_keys=list(keys))
    names: Sequence[str] = compiled.positiontup or ()
    # SQLAlchemy's own bind processors (a private name: a version without it takes its way)
    binds: dict[str, Any] | None = getattr(compiled, "_bind_processors", None)
    if binds is None:
        return None
    processors: dict[str, Callable[[Any], Any]] = {
        name: process for name, process in binds.items() if callable(process)}
    columns = [name for name in names if name in keys]
    if (len(columns) != len(keys) or list(names[:len(columns)]) != columns
            or len(processors) != len(binds)):
        return None
    own = compiled.construct_params(dict.fromkeys(keys))
    constants = tuple(_processed(processors.get(name), own[name])
                      for name in names[len(columns):])
    return _Plan(compiled.string, tuple(columns), processors, constants)


def _bound(process: Callable[[Any], Any], column: Sequence[Any]) -> list[Any]:
    """A column's values as bound: each distinct object processed once (None stays None)."""
    ids = list(map(id, column))
    done = {key: None if value is None else process(value)
            for key, value in dict(zip(ids, column, strict=True)).items()}
    return list(map(done.__getitem__, ids))


def _insert_rows(conn: Connection, sql: str, columns: list[Sequence[Any]],
                 constants: tuple[Any, ...]) -> None:
    """The rows of ``columns`` inserted by statements of many rows each (``VALUES (…),
    (…), …``), not one statement a row: SQLite's module lets the GIL go around each
    statement's step and takes it back after, and a thread recording beside a busy event
    loop waits for it each time (measured: 200 000 outcomes in 84 s beside a busy thread
    instead of 3.7 s alone). Each row still sees the rows before it, as executemany's would.

    A column holding one object in every row (a chunk's source, its ``now``, a column of
    NULLs) is bound once, a numbered parameter each row names (``?2``): the module binds
    a value at a cost, naming one costs SQLite little (measured: 211 ns a row for a NULL,
    70 for a short text, 14 for a numbered parameter)."""
    width, count = len(columns), len(columns[0])
    one = "VALUES (" + ", ".join("?" * width) + ")"
    if one not in sql:  # not the plain INSERT … VALUES it expects
        conn.exec_driver_sql(sql, [(*row, *constants) for row in zip(*columns, strict=True)])
        return
    shared = [index for index, column in enumerate(columns) if _one_object(column)]
    varying = [column for index, column in enumerate(columns) if index not in shared]
    first, later = _groups(width, shared)
    rows = list(zip(*varying, strict=True)) if varying else [()] * count
    head = [columns[index][0] for index in shared]
    limit = min(VARIABLES, conn.connection.dbapi_connection.getlimit(  # type: ignore[union-attr]
        sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    per = max(1, (limit - len(head) - len(constants)) // len(varying)) if varying else count
    for start in range(0, count, per):
        batch = rows[start:start + per]
        values = "VALUES " + ", ".join([first, *[later] * (len(batch) - 1)])
        flat = [*head, *chain.from_iterable(batch), *constants]
        conn.exec_driver_sql(sql.replace(one, values, 1), tuple(flat))


def _one_object(column: Sequence[Any]) -> bool:
    """Whether every row holds the same object (not merely an equal one: 1 and 1.0 are
    equal, and a TEXT column stores them apart)."""
    return all(map(is_, column, repeat(column[0])))


def _groups(width: int, shared: list[int]) -> tuple[str, str]:
    """The first row's parameters and the next rows': the shared columns numbered 1, 2…
    in both; the first row numbers its other columns on from there, and each later row's
    plain ``?`` takes the number after the highest one so far (SQLite's rule)."""
    numbers = {index: number for number, index in enumerate(shared, start=1)}
    following = iter(range(len(shared) + 1, width + 1))
    first = [f"?{numbers[i]}" if i in numbers else f"?{next(following)}" for i in range(width)]
    later = [f"?{numbers[i]}" if i in numbers else "?" for i in range(width)]
    return f"({', '.join(first)})", f"({', '.join(later)})"


def _processed(process: Callable[[Any], Any] | None, value: Any) -> Any:
    return value if process is None or value is None else process(value)
