"""A SQL database (through SQLAlchemy) as a source: configured streams, keyset-paged.

Each configured stream is a table or a SELECT query with a key column, an optional cursor
column (its change time) and a column mapping (see ``columns.py``). With a cursor the
stream is incremental, read in (cursor, key) order strictly after a position (see
``query.py``) — or, for its first read, in key order up to a moment (``read_by_key``);
without one it is read whole, in key order. Lines of an order or a cart
come from a JSON column or from a child table, fetched with one query per page.

The database is opened read-only where the driver allows it (SQLite ``mode=ro``,
PostgreSQL ``default_transaction_read_only``), so a query in the configuration cannot
write. Queries run in a worker thread, one page at a time, each on a pooled connection.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.sql.elements import TextClause

from connectors.sources.base import (
    Position,
    RawRecord,
    SourceAuthError,
    SourceError,
    StreamInfo,
    UnsupportedStream,
)
from connectors.sources.sql.columns import EPOCH, ChangeTimes, iso, key_text, missing_columns, zone
from connectors.sources.sql.config import SqlConfig, SqlStreamSpec
from connectors.sources.sql.projection import LinesProjection, Projection
from connectors.sources.sql.query import (
    CURSOR_ALIAS,
    Plan,
    by_key_params,
    first_page_params,
    ids_sql,
    lines_sql,
    page_sql,
    plan_for,
    probe_sql,
    sample_sql,
)

log = logging.getLogger("shopsync.sources.sql")
_AUTH = re.compile(r"authentication failed|access denied|password", re.IGNORECASE)
_AUTH_STATES = frozenset({"28000", "28P01"})


def _readonly(url: URL) -> URL:
    """SQLite opened read-only through a file: URI (it then cannot create a missing file)."""
    if url.get_backend_name() != "sqlite":
        return url
    path = Path(url.database or "").expanduser().resolve()
    if not path.is_file():
        raise SourceError(f"connection.url: there is no SQLite database at {path}")
    return url.set(database=path.as_uri(), query={**url.query, "mode": "ro", "uri": "true"})


def _refused(exc: SQLAlchemyError, where: str) -> SourceError:
    """A database error as a SourceError: the driver's first line, never the SQL or URL."""
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    message = lines[0] if lines else type(orig).__name__
    if getattr(orig, "sqlstate", None) in _AUTH_STATES or (
            isinstance(exc, OperationalError) and _AUTH.search(message)):
        return SourceAuthError(f"the database refused the credentials: {message}")
    return SourceError(f"{where}: {message}")


def _sqlite_text(dbapi_connection: Any, _record: Any) -> None:
    """SQLite stores whatever bytes it is given as TEXT, and sqlite3 fails the whole query on
    one that is not UTF-8: the bytes are kept as lone surrogates instead (see exact.py), so
    that the mapping quarantines that row alone, naming the field."""
    dbapi_connection.text_factory = _surrogate_escaped


def _surrogate_escaped(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _changed_at(plan: Plan, project: Projection, value: Any) -> str:
    """A row's change time as ``iso`` writes it: local text from its hour's answer, which
    the projection remembers (``_UtcTexts.local_whole_hour``), else ``plan.moment``'s."""
    if type(value) is str and plan.reads_text:
        text = project.texts.local_whole_hour(value)
        if text is not None:
            return text
    return iso(plan.moment(value))


class SqlConnector:
    """Reads the configured streams of one database; see the module docstring."""

    platform = "sql"

    def __init__(self, config: SqlConfig) -> None:
        self.config = config
        self.tz = zone(config.timezone)
        self._changed = ChangeTimes()
        self._engine: Engine | None = None

    def __repr__(self) -> str:
        url = self.config.sqlalchemy_url()
        return f"{type(self).__name__}({url.get_backend_name()}, streams={list(self.config.streams)})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def engine(self) -> Engine:
        if self._engine is None:
            url = _readonly(self.config.sqlalchemy_url())
            args = {"check_same_thread": False} if url.get_backend_name() == "sqlite" else {}
            engine = create_engine(url, connect_args=args, hide_parameters=True)
            if engine.dialect.name == "postgresql":
                event.listen(engine, "connect", self._postgres_session)
            if engine.dialect.name == "sqlite":
                event.listen(engine, "connect", _sqlite_text)
            self._engine = engine
        return self._engine

    def _postgres_session(self, dbapi_connection: Any, _record: Any) -> None:
        """Naive timestamps in the source's zone, and no writes whatever a query says."""
        cursor = dbapi_connection.cursor()
        cursor.execute("SELECT set_config('TimeZone', %s, false),"
                       " set_config('default_transaction_read_only', 'on', false)",
                       (self.config.timezone,))
        cursor.close()
        dbapi_connection.commit()

    # the interface -----------------------------------------------------------------

    def streams(self) -> Mapping[str, StreamInfo]:
        return {
            name: StreamInfo(name, spec.cursor is not None,
                             f"{spec.table or 'query'}, key {spec.key}"
                             + (f", cursor {spec.cursor}" if spec.cursor else ", read whole"))
            for name, spec in self.config.streams.items()
        }

    def _spec(self, stream: str) -> SqlStreamSpec:
        if stream in self.config.streams:
            return self.config.streams[stream]
        raise UnsupportedStream(f"no stream {stream!r} is configured; configured:"
                                f" {', '.join(self.config.streams) or 'none'}"
                                " (connection.streams)")

    async def check(self) -> None:
        """Connect, then read one row of each stream to see that its columns exist."""
        await asyncio.to_thread(self._check)

    def _check(self) -> None:
        self._run("connection.url", text("SELECT 1"), {})
        for stream, spec in self.config.streams.items():
            where = f"connection.streams.{stream}.{'query' if spec.query else 'table'}"
            rows = self._run(where, sample_sql(self.engine().dialect, spec), {})
            if rows:
                self._columns_exist(stream, spec, rows[0])

    def position(self, stream: str, record: RawRecord) -> Position:
        self._spec(stream)
        return Position(self._changed(record["_changed_at"]), record["_key"])

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of ``stream`` after ``after`` and up to ``until`` in (cursor, key) order, or
        the whole stream in key order when it has no cursor (``after`` then only skips keys
        up to its id, ``until`` is ignored)."""
        spec = self._spec(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        return self._pages(stream, spec, after, until)

    def reads_by_key(self, stream: str) -> bool:
        """A stream with a cursor column can be read in key order (``read_by_key``)."""
        return bool(self._spec(stream).cursor)

    def read_by_key(self, stream: str, *, after_key: str | None, since: datetime | None,
                    until: datetime) -> AsyncIterator[list[RawRecord]]:
        """Pages of the rows changed from ``since`` up to ``until``, in key order, after
        ``after_key``: a first read, whose records a ledger keyed by id then takes in its own
        order."""
        spec = self._spec(stream)
        if not spec.cursor:
            raise SourceError(f"connection.streams.{stream}: no cursor column, so no change"
                              " time to read up to")
        if until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        return self._pages(stream, spec, None, until, by_key=(after_key, since))

    async def ids(self, stream: str) -> AsyncIterator[list[str]]:
        """Every key of ``stream``, page by page (for finding deletions)."""
        spec = self._spec(stream)
        plan = await asyncio.to_thread(self._plan, stream, spec)
        if plan is None:
            return
        last: Any = None
        while True:
            params: dict[str, Any] = {"limit": self.config.page_size}
            if last is not None:
                params["k"] = last
            rows = await asyncio.to_thread(
                self._run, f"connection.streams.{stream}", ids_sql(plan, after=last is not None),
                params)
            if rows:
                yield [str(r["k"]) for r in rows]
                last = rows[-1]["k"]
            if len(rows) < self.config.page_size:
                return

    # reading -------------------------------------------------------------------------

    async def _pages(self, stream: str, spec: SqlStreamSpec, after: Position | None,
                     until: datetime | None,
                     by_key: tuple[str | None, datetime | None] | None = None,
                     ) -> AsyncIterator[list[RawRecord]]:
        """The pages of a read in (cursor, key) order, or in key order when ``by_key`` is
        (the key to read after, the change time to read from)."""
        plan = await asyncio.to_thread(self._plan, stream, spec)
        if plan is None:
            return  # no row at all
        if by_key is not None and until is not None:
            params = by_key_params(plan, by_key[0], by_key[1], until)
        else:
            params = first_page_params(plan, after, until)
        project = Projection(spec, self.tz, f"connection.streams.{stream}.")
        checked = False
        while True:
            lower = "t" in params if plan.cursor else "k" in params
            sql = page_sql(plan, after=lower, tie="k" in params, until="until" in params,
                           by_key=by_key is not None)
            rows, records = await asyncio.to_thread(
                self._page, plan, spec, project, sql, {**params, "limit": self.config.page_size},
                check=not checked)
            if not rows:
                return
            checked = True
            log.debug("%s: %d rows after %s", stream, len(rows),
                      {k: v for k, v in params.items() if k in ("t", "k")})
            if spec.lines is not None and not spec.lines.column:
                await asyncio.to_thread(self._attach_lines, stream, spec, rows, records)
            yield records
            if len(rows) < self.config.page_size:
                return
            last = rows[-1]
            # in key order, the lower bound of change time stays; else it moves with the key
            kept = ("until", "t") if by_key is not None else ("until",)
            params = {k: v for k, v in params.items() if k in kept}
            params["k"] = last[spec.key]
            if plan.cursor and by_key is None:
                params["t"] = last[CURSOR_ALIAS]

    def _plan(self, stream: str, spec: SqlStreamSpec) -> Plan | None:
        dialect = self.engine().dialect
        where = f"connection.streams.{stream}.{'query' if spec.query else 'table'}"
        probe = self._run(where, probe_sql(dialect, spec), {})
        if not probe:
            return None
        return plan_for(dialect, stream, spec, probe[0], self.tz)

    def _page(self, plan: Plan, spec: SqlStreamSpec, project: Projection, sql: TextClause,
              params: dict[str, Any], *, check: bool) -> tuple[list[dict[str, Any]], list[RawRecord]]:
        """A page's rows and their records, made in the worker thread that fetched them: most
        of a read's CPU, kept off the event loop (as the files source does)."""
        rows = self._run(f"connection.streams.{plan.stream}", sql, params)
        if rows and check:
            self._columns_exist(plan.stream, spec, rows[0])
        return rows, [self._record(plan, spec, project, row) for row in rows]

    def _record(self, plan: Plan, spec: SqlStreamSpec, project: Projection,
                row: dict[str, Any]) -> RawRecord:
        try:
            record = project(row)
        except SourceError:
            raise  # the configuration's mistake, not the row's
        except Exception as exc:  # noqa: BLE001 - one row's value is that row's problem
            record = {"_errors": [f"{plan.stream} row {key_text(row[spec.key])!r}: the row"
                                  f" cannot be read: {type(exc).__name__}: {str(exc)[:200]}"]}
        record["_key"] = key_text(row[spec.key])
        record["_changed_at"] = _changed_at(plan, project, row[CURSOR_ALIAS]) \
            if plan.cursor else iso(EPOCH)
        return record

    def _attach_lines(self, stream: str, spec: SqlStreamSpec, rows: list[dict[str, Any]],
                      records: list[RawRecord]) -> None:
        lines = spec.lines
        assert lines is not None and lines.parent is not None
        sql = lines_sql(self.engine().dialect, lines.table, lines.query, lines.parent, lines.key)
        children = self._run(f"connection.streams.{stream}.lines", sql,
                             {"parents": [row[spec.key] for row in rows]})
        if children:
            wanted = [lines.parent, *([lines.key] if lines.key else []), *lines.columns.values()]
            absent = [c for c in wanted if c not in children[0]]
            if absent:
                raise SourceError(f"connection.streams.{stream}.lines: no column"
                                  f" {', '.join(map(repr, absent))} in the lines; their"
                                  f" columns: {', '.join(children[0])}")
        by_parent: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        for child in children:
            by_parent[key_text(child[lines.parent])].append(child)
        project = LinesProjection(lines, self.tz)
        for record in records:
            record[lines.field] = project(by_parent.get(record["_key"], []))

    def _columns_exist(self, stream: str, spec: SqlStreamSpec, row: Mapping[str, Any]) -> None:
        absent = missing_columns(spec, row)
        if absent:
            named = "; ".join(f"connection.streams.{stream}.{where}: no column {column!r}"
                              for where, column in absent)
            raise SourceError(f"{named} — the rows of {stream} have:"
                              f" {', '.join(c for c in row if c != CURSOR_ALIAS)}")

    def _run(self, where: str, sql: TextClause, params: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            with self.engine().connect() as conn:
                result = conn.execute(sql, params)
                # each row zipped with the names: a RowMapping per row costs twice as much
                # (a name given twice keeps its last value either way)
                columns = list(result.keys())
                return [dict(zip(columns, row, strict=True)) for row in result]
        except SQLAlchemyError as exc:
            raise _refused(exc, where) from None
