"""Configured tabular streams, shared by the SQL and the files connectors.

A generic source has no fixed schema: its configuration says, per stream, which column is
the key, which one the change time (the cursor), and which column feeds which field of the
records it yields (``columns``: target field -> source column; dotted targets such as
``customer.email`` nest). Constants and ``str.format`` templates over the row fill the
rest, and order or cart lines come from a JSON column or (SQL) a child table.

Values are passed on as the source holds them, with one exception: timestamps. A naive
one is read in the source's time zone and every timestamp leaves as ISO 8601 in UTC, so
that nothing downstream needs to know the zone.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: what a text value must look like to be taken as a timestamp: a date AND a time of day
_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$")
_OFFSET = re.compile(r"(Z|[+-]\d{2}(:?\d{2})?)$")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinesSpec(_Spec):
    """Order or cart lines: a JSON column of the row (a list of objects), or a child table
    or query whose ``parent`` column holds the row's key (SQL only)."""

    column: str | None = None
    table: str | None = None
    query: str | None = None
    #: the child rows' column holding the parent's key
    parent: str | None = None
    #: the child rows' column that orders the lines of one parent
    key: str | None = None
    #: the record field the lines go to
    field: str = "products"
    #: line field -> element key or child column (empty: elements are taken as they are)
    columns: dict[str, str] = Field(default_factory=dict)
    constants: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_source(self) -> LinesSpec:
        given = [name for name in ("column", "table", "query") if getattr(self, name)]
        if len(given) != 1:
            raise ValueError("give exactly one of `column` (a JSON column of the row),"
                             " `table` or `query` (child rows, with `parent`)")
        if given[0] != "column" and not self.parent:
            raise ValueError("`parent` is required with a child table or query: the child"
                             " column holding the parent's key")
        return self


class StreamSpec(_Spec):
    """One configured stream: its key, its cursor and how its columns become fields."""

    key: str
    #: the change-time column; without one the stream is read whole every time
    cursor: str | None = None
    #: target field (dotted for nested ones) -> source column (dotted: a path into JSON)
    columns: dict[str, str] = Field(default_factory=dict)
    constants: dict[str, Any] = Field(default_factory=dict)
    #: target field -> ``str.format`` template over the row's columns ("order-{id}")
    templates: dict[str, str] = Field(default_factory=dict)
    lines: LinesSpec | None = None

    @field_validator("key", "cursor")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must name a column")
        return value

    @field_validator("templates")
    @classmethod
    def _formats(cls, value: dict[str, str]) -> dict[str, str]:
        for target, template in value.items():
            try:
                list(string.Formatter().parse(template))
            except ValueError as exc:
                raise ValueError(f"{target}: {template!r} is not a str.format template ({exc})"
                                 ) from None
        return value


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}: use an IANA name like Europe/Paris"
                         " (naive timestamps of the source are read in it)") from None


def to_utc(moment: datetime, tz: ZoneInfo) -> datetime:
    """A naive moment read in ``tz`` (the first of two in a DST fall-back hour), in UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def parse_timestamp(text: str, tz: ZoneInfo) -> datetime | None:
    """A timestamp in text (naive ones read in ``tz``) in UTC, or None if it is not one."""
    text = text.strip()
    if not _TIMESTAMP.match(text):
        return None
    try:
        return to_utc(datetime.fromisoformat(text), tz)
    except (ValueError, OverflowError):  # past the calendar in UTC: left as text, for the
        return None  # mapping to name


def has_offset(text: str) -> bool:
    """Whether a timestamp's text names its offset (``Z``, ``+02:00``) after its time."""
    return bool(_OFFSET.search(text.strip()[10:]))


class ChangeTimes:
    """Records' change-time texts (``_changed_at``) read as datetimes, the last one
    remembered: a page's records mostly share theirs (a file's arrival, a bulk edit's
    second), and one datetime for them all is pickled once a page, not once a record."""

    def __init__(self) -> None:
        #: (text, its datetime), replaced whole: a thread reading it sees the one or the other
        self._last: tuple[str | None, datetime] = (None, EPOCH)

    def __call__(self, text: str) -> datetime:
        last = self._last
        if last[0] != text:
            last = self._last = (text, datetime.fromisoformat(text))
        return last[1]


def iso(moment: datetime) -> str:
    return (moment if moment.tzinfo is UTC else moment.astimezone(UTC)).isoformat()


#: values a record takes as they are (checked by exact type: the commonest, at once)
AS_THEY_ARE = frozenset({int, float, bool, type(None)})
_BYTES = (bytes, bytearray, memoryview)


def normalize(value: Any, tz: ZoneInfo) -> Any:
    """A source value for a record: timestamps (objects, or text that is one) in UTC ISO
    8601; dates in ISO; bytes as text; the rest as it is."""
    if type(value) in AS_THEY_ARE:
        return value
    if isinstance(value, str):
        return timestamp_text(value, tz) if len(value) >= 16 and value[4:5] == "-" else value
    if isinstance(value, datetime):
        return iso(to_utc(value, tz))
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, _BYTES):  # undecodable bytes are kept as such: see exact.py
        return bytes(value).decode("utf-8", errors="surrogateescape")
    if isinstance(value, list | tuple):
        return [normalize(v, tz) for v in value]
    if isinstance(value, dict):
        return {str(k): normalize(v, tz) for k, v in value.items()}
    return value


def timestamp_text(value: str, tz: ZoneInfo) -> str:
    """Text that is a timestamp in UTC ISO 8601; other text as it is."""
    moment = parse_timestamp(value, tz)
    return value if moment is None else iso(moment)


#: integers a float holds exactly, each apart from its neighbours: beyond, no float is an id
EXACT_FLOAT = 2**53


def key_text(value: Any) -> str | None:
    """A key as the text of a position's ``record_id`` (``17.0`` from a float column is 17;
    a float beyond 2^53 keeps its float text: it is no exact id, and the mapping says so)."""
    if type(value) is int:  # the commonest key, at once: its text has no blank to strip
        return str(value)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) <= EXACT_FLOAT:
        value = int(value)
    text = str(value).strip()
    return text or None


def lookup(row: Mapping[str, Any], column: str) -> tuple[bool, Any]:
    """(found, value) of ``column`` in ``row``; a dotted name missing as such is a path into
    nested objects (JSON Lines)."""
    if column in row:
        return True, row[column]
    if "." in column:
        value: Any = row
        for part in column.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return False, None
            value = value[part]
        return True, value
    return False, None


def set_path(record: dict[str, Any], field: str, value: Any) -> None:
    if "." not in field:  # most fields: at once
        record[field] = value
        return
    *parents, leaf = field.split(".")
    set_in(record, parents, leaf, value)


def set_in(record: dict[str, Any], parents: list[str], leaf: str, value: Any) -> None:
    """``set_path`` of a dotted field already split: the objects it nests in, and its last
    part (a projection splits each target once per stream)."""
    target = record
    for part in parents:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[leaf] = value


def missing_columns(spec: StreamSpec, row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(config field, column) of every configured column ``row`` does not have."""
    wanted = [("key", spec.key)] + ([("cursor", spec.cursor)] if spec.cursor else [])
    wanted += [(f"columns.{target}", column) for target, column in spec.columns.items()]
    if spec.lines is not None and spec.lines.column:
        wanted.append(("lines.column", spec.lines.column))
    return [(where, column) for where, column in wanted if not lookup(row, column)[0]]
