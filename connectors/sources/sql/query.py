"""The SQL a stream is read with: keyset pages in (cursor, key) order.

``WHERE c >= :t AND (c > :t OR k > :k) ORDER BY c, k LIMIT :n`` walks a table in the
order of its change time and key without OFFSET, so rows changing while it is read are
neither skipped nor read twice at one position, and every page is an index range scan when
(cursor, key) is indexed. The next page starts from the last row's own values as the
database returned them, never from a converted copy.

How the cursor is compared depends on how it is stored, which one probe row tells:

- native timestamps (PostgreSQL, MySQL…): compared as they are; a naive column gets naive
  bounds in the source's zone, a zoned one zoned bounds (PostgreSQL's session zone is set
  to the source's, so the two agree);
- SQLite text: normalized by ``strftime('%Y-%m-%d %H:%M:%f', c)`` (milliseconds), since
  text compares as text and formats vary ("10:00:00" vs "10:00:00.000000"); positions are
  computed from that same normalized value, so Python and SQL agree on the order;
- Unix seconds or milliseconds (``cursor_format``): compared as numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import TextClause

from connectors.sources.base import Position, SourceError
from connectors.sources.sql.columns import has_offset, parse_timestamp, to_utc
from connectors.sources.sql.config import SqlStreamSpec

CURSOR_ALIAS = "_shopsync_cursor"
_SQLITE_FORMAT = "%Y-%m-%d %H:%M:%f"


def quote(dialect: Dialect, name: str) -> str:
    """A column or (``schema.``)table name, quoted where the dialect needs it."""
    return ".".join(dialect.identifier_preparer.quote(part) for part in name.split("."))


def source_sql(dialect: Dialect, table: str | None, query: str | None) -> str:
    return f"({query}) AS src" if query else f"{quote(dialect, table or '')} AS src"


@dataclass(frozen=True)
class Plan:
    """How one stream is read, learned from the database at the start of a read."""

    stream: str
    source: str  # the FROM clause
    key: str  # the key column, quoted, as src.<key>
    cursor: str | None  # the cursor column, quoted (None: a full stream)
    kind: str  # "native" | "sqlite_text" | "epoch" | "epoch_ms" | "none"
    zoned: bool  # native values carry a zone, or SQLite text carries offsets
    int_key: bool
    collate: str  # appended to the key in comparisons and ordering (PostgreSQL text keys)
    tz: ZoneInfo

    @property
    def cursor_expr(self) -> str | None:
        if self.cursor is None:
            return None
        if self.kind == "sqlite_text":
            return f"strftime('{_SQLITE_FORMAT}', {self.cursor})"
        return self.cursor

    # cursor values: database <-> UTC -------------------------------------------------

    @property
    def reads_text(self) -> bool:
        """Whether ``moment`` reads a cursor value in text as ``parse_timestamp`` does."""
        return self.kind not in ("epoch", "epoch_ms") and not (
            self.kind == "sqlite_text" and self.zoned)

    def moment(self, value: Any) -> datetime:
        """The UTC time of a cursor value as the page query returned it."""
        if self.kind in ("epoch", "epoch_ms"):
            seconds = float(value) / (1000 if self.kind == "epoch_ms" else 1)
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, datetime):
            return to_utc(value, self.tz)
        if isinstance(value, str):
            if self.kind == "sqlite_text" and self.zoned:
                return datetime.fromisoformat(value).replace(tzinfo=UTC)
            moment = parse_timestamp(value, self.tz)
            if moment is not None:
                return moment
        raise SourceError(f"{self.stream}: the cursor value {value!r} is not a time; for Unix"
                          " times set connection.streams.<stream>.cursor_format: epoch")

    def bound(self, moment: datetime, *, lower: bool) -> Any:
        """A UTC time as the database compares it with the cursor; in SQLite (milliseconds)
        a lower bound is rounded up and an upper one down, so neither lets in a row the
        exact time would not."""
        if self.kind in ("epoch", "epoch_ms"):
            return moment.timestamp() * (1000 if self.kind == "epoch_ms" else 1)
        if self.kind == "sqlite_text":
            micro = moment.microsecond
            if micro % 1000:
                step = 1000 - micro % 1000 if lower else -(micro % 1000)
                moment = moment + timedelta(microseconds=step)
            local = moment.astimezone(UTC if self.zoned else self.tz)
            return f"{local:%Y-%m-%d %H:%M:%S}.{local.microsecond // 1000:03d}"
        if self.zoned:
            return moment.astimezone(UTC)
        return moment.astimezone(self.tz).replace(tzinfo=None)

    def exact(self, moment: datetime) -> bool:
        """Whether the database holds times as finely as ``moment`` (else a bound on it
        was rounded, and the key cannot break the tie)."""
        return self.kind != "sqlite_text" or moment.microsecond % 1000 == 0

    def key_value(self, record_id: str) -> Any:
        if self.int_key:
            try:
                return int(record_id)
            except ValueError:
                raise SourceError(f"{self.stream}: position id {record_id!r} is not an integer"
                                  " like the key column") from None
        return record_id


def plan_for(dialect: Dialect, stream: str, spec: SqlStreamSpec, probe: dict[str, Any] | None,
             tz: ZoneInfo) -> Plan:
    """The plan of a stream, from one probe row (key and cursor values) or None if empty."""
    key = f"src.{quote(dialect, spec.key)}"
    cursor = f"src.{quote(dialect, spec.cursor)}" if spec.cursor else None
    sample_key = probe.get("k") if probe else None
    sample = probe.get("c") if probe else None
    kind, zoned = "none", False
    if spec.cursor:
        kind = spec.cursor_format if spec.cursor_format != "timestamp" else "native"
        if kind == "native" and dialect.name == "sqlite":
            kind = "sqlite_text"
        if kind == "sqlite_text" and isinstance(sample, int | float):
            raise SourceError(
                f"connection.streams.{stream}.cursor: {spec.cursor!r} holds numbers; if they"
                " are Unix times, set cursor_format: epoch (or epoch_ms)")
        if isinstance(sample, datetime):
            zoned = sample.tzinfo is not None
        elif isinstance(sample, str):
            zoned = has_offset(sample)
    int_key = isinstance(sample_key, int) and not isinstance(sample_key, bool)
    collate = ' COLLATE "C"' if dialect.name == "postgresql" and isinstance(sample_key, str) else ""
    return Plan(stream, source_sql(dialect, spec.table, spec.query), key, cursor, kind, zoned,
                int_key, collate, tz)


def probe_sql(dialect: Dialect, spec: SqlStreamSpec) -> TextClause:
    key = f"src.{quote(dialect, spec.key)}"
    where = f"{key} IS NOT NULL"
    select = f"{key} AS k"
    if spec.cursor:
        cursor = f"src.{quote(dialect, spec.cursor)}"
        select += f", {cursor} AS c"
        where += f" AND {cursor} IS NOT NULL"
    return text(f"SELECT {select} FROM {source_sql(dialect, spec.table, spec.query)}"
                f" WHERE {where} LIMIT 1")


def sample_sql(dialect: Dialect, spec: SqlStreamSpec) -> TextClause:
    return text(f"SELECT src.* FROM {source_sql(dialect, spec.table, spec.query)} LIMIT 1")


def page_sql(plan: Plan, *, after: bool, tie: bool, until: bool,
             by_key: bool = False) -> TextClause:
    """One page: rows after (:t, :k) — or from :t, when the key cannot break the tie — up
    to :until, in (cursor, key) order; full streams by key alone, after :k; ``by_key``: rows
    changed from :t up to :until in key order, after :k (``after`` and ``tie`` say which of
    :t and :k there are)."""
    key = plan.key + plan.collate
    where = [f"{plan.key} IS NOT NULL"]
    expr = plan.cursor_expr
    if expr is None:
        if after:
            where.append(f"{key} > :k")
        order = key
    elif by_key:
        where.append(f"{expr} IS NOT NULL")
        if after:
            where.append(f"{expr} >= :t")
        if tie:
            where.append(f"{key} > :k")
        if until:
            where.append(f"{expr} <= :until")
        order = key
    else:
        where.append(f"{expr} IS NOT NULL")
        if after:
            where.append(f"{expr} >= :t AND ({expr} > :t OR {key} > :k)" if tie
                         else f"{expr} >= :t")
        if until:
            where.append(f"{expr} <= :until")
        order = f"{expr}, {key}"
    select = f"src.*, {expr} AS {CURSOR_ALIAS}" if expr else "src.*"
    return text(f"SELECT {select} FROM {plan.source} WHERE {' AND '.join(where)}"
                f" ORDER BY {order} LIMIT :limit")


def ids_sql(plan: Plan, *, after: bool) -> TextClause:
    key = plan.key + plan.collate
    where = f"{plan.key} IS NOT NULL" + (f" AND {key} > :k" if after else "")
    return text(f"SELECT {plan.key} AS k FROM {plan.source} WHERE {where} ORDER BY {key}"
                " LIMIT :limit")


def lines_sql(dialect: Dialect, table: str | None, query: str | None, parent: str,
              key: str | None) -> TextClause:
    parent_column = f"src.{quote(dialect, parent)}"
    order = parent_column + (f", src.{quote(dialect, key)}" if key else "")
    return text(f"SELECT src.* FROM {source_sql(dialect, table, query)}"
                f" WHERE {parent_column} IN :parents ORDER BY {order}"
                ).bindparams(bindparam("parents", expanding=True))


def first_page_params(plan: Plan, after: Position | None, until: datetime | None) -> dict[str, Any]:
    """Bind values of a read's first page: ``t`` and ``k`` from ``after`` (``k`` alone for a
    full stream; ``t`` alone when the bound was rounded or has no id), and ``until``."""
    params: dict[str, Any] = {}
    if after is not None:
        if plan.cursor is None:
            if after.record_id:
                params["k"] = plan.key_value(after.record_id)
        else:
            params["t"] = plan.bound(after.changed_at, lower=True)
            if after.record_id and plan.exact(after.changed_at):
                params["k"] = plan.key_value(after.record_id)
    if until is not None and plan.cursor is not None:
        params["until"] = plan.bound(until, lower=False)
    return params


def by_key_params(plan: Plan, after_key: str | None, since: datetime | None,
                  until: datetime) -> dict[str, Any]:
    """Bind values of a read in key order's first page (``page_sql(by_key=True)``): ``t``
    from ``since``, ``k`` from ``after_key``, and ``until``."""
    params: dict[str, Any] = {"until": plan.bound(until, lower=False)}
    if since is not None:
        params["t"] = plan.bound(since, lower=True)
    if after_key is not None:
        params["k"] = plan.key_value(after_key)
    return params
