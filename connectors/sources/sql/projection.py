"""Rows into records, a stream's configuration read once (see ``columns.py`` for what a
stream's columns, constants, templates and lines mean).

Every row of a stream takes the same columns, so what each column needs — a path into
nested objects or not, a nested target or not — is worked out once per stream, and the
commonest values (text, numbers) are looked up, normalized and set inline, not with a call
each. Timestamp texts are remembered: an export repeats many.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from connectors.sources.base import SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.sql.columns import (
    AS_THEY_ARE,
    LinesSpec,
    StreamSpec,
    iso,
    lookup,
    normalize,
    parse_timestamp,
    set_in,
    set_path,
    timestamp_text,
)


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""



def project(spec: StreamSpec, row: Mapping[str, Any], tz: ZoneInfo, where: str = "") -> dict[str, Any]:
    """The record fields of one row (see ``Projection``)."""
    return Projection(spec, tz, where)(row)


#: a configured column, worked out once: (target, the objects a dotted target nests in or
#: None, the target's last part, source column, the column's path when it is dotted)
_Cell = tuple[str, list[str] | None, str, str, list[str] | None]


def _cells(columns: Mapping[str, str]) -> list[_Cell]:
    return [(target, target.split(".")[:-1] if "." in target else None,
             target.rsplit(".", 1)[-1], column, column.split(".") if "." in column else None)
            for target, column in columns.items()]


#: timestamp texts a projection remembers at most
_REMEMBERED = 65_536
_ASCII_DIGITS = frozenset("0123456789")
_SIXTY = frozenset("012345")
#: naive text of a time to the second: its hour, minutes, seconds and fraction (if any)
_LOCAL_TEXT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}):([0-5][0-9]):([0-5][0-9])"
                         r"(?:\.([0-9]{3}|[0-9]{6}))?")


class _UtcTexts(dict[str, str]):
    """Text that may be a timestamp -> ``normalize``'s answer, remembered: an export repeats
    many (a customer's signup time on each of their orders), and parsing one, converting
    it and writing it again costs twenty times a look-up."""

    def __init__(self, tz: ZoneInfo) -> None:
        super().__init__()
        self.tz = tz
        #: "2025-01-04T13+01:00" -> "2025-01-04T12": the hour in UTC of an hour at an offset,
        #: or of a local hour ("2025-01-04 13")
        self.hours: dict[str, str | None] = {}

    def __missing__(self, text: str) -> str:
        if len(self) >= _REMEMBERED:
            self.clear()  # not the hours: far fewer, and each costs a few texts' parsing
        answer = self[text] = (self._whole_hour_offset(text) or self.local_whole_hour(text)
                               or timestamp_text(text, self.tz))
        return answer

    def _whole_hour_offset(self, text: str) -> str | None:
        """The answer for the commonest zoned text, ``2025-01-04T13:04:08+01:00``: with an
        offset of whole hours, minutes and seconds stay as written, and the rest is its
        hour's answer (``2025-01-04T13:00:00+01:00`` normalized); None for other text."""
        if len(text) != 25 or text[22:] != ":00" or text[19] not in "+-" or text[0] not in _ASCII_DIGITS \
                or text[13] != ":" or text[16] != ":":
            return None
        minutes, seconds = text[14:16], text[17:19]
        if not (minutes[0] in _SIXTY and minutes[1] in _ASCII_DIGITS
                and seconds[0] in _SIXTY and seconds[1] in _ASCII_DIGITS):
            return None
        hour_in_utc = self._hour(text[:13] + text[19:], self._zoned_hour_in_utc)
        return None if hour_in_utc is None else f"{hour_in_utc}:{minutes}:{seconds}+00:00"

    def local_whole_hour(self, text: str) -> str | None:
        """The answer for the commonest naive text, ``2025-01-04 13:04:08`` (a fraction of 3
        or 6 digits after it, as SQLite's ``strftime('%f')`` writes its cursor, too), in an
        hour the zone is a whole number of hours off UTC from its first second to its last:
        minutes and seconds stay as written, and the rest is its hour's answer. None for
        other text (and in an hour whose offset changes, or is not whole hours)."""
        match = _LOCAL_TEXT.fullmatch(text)
        if match is None:
            return None
        hour_key, minutes, seconds, fraction = match.groups()
        hour_in_utc = self._hour(hour_key, self._local_hour_in_utc)
        if hour_in_utc is None:
            return None
        if fraction is None or not fraction.strip("0"):  # no microseconds: none written
            return f"{hour_in_utc}:{minutes}:{seconds}+00:00"
        return f"{hour_in_utc}:{minutes}:{seconds}.{fraction.ljust(6, '0')}+00:00"

    def _hour(self, hour_key: str, work_out: Callable[[str], str | None]) -> str | None:
        """An hour's answer, worked out once and remembered (the hours bounded as the texts
        are)."""
        if hour_key not in self.hours:
            if len(self.hours) >= _REMEMBERED:
                self.hours.clear()
            self.hours[hour_key] = work_out(hour_key)
        return self.hours[hour_key]

    def _zoned_hour_in_utc(self, hour_key: str) -> str | None:
        """``2025-01-04T13+01:00`` -> ``2025-01-04T12``: the hour in UTC of an hour at an
        offset of whole hours (None when it is not one)."""
        moment = parse_timestamp(f"{hour_key[:13]}:00:00{hour_key[13:]}", self.tz)
        hour = None if moment is None else iso(moment)
        return hour[:13] if hour and hour[13:] == ":00:00+00:00" else None

    def _local_hour_in_utc(self, hour_key: str) -> str | None:
        """``2025-01-04 13`` -> ``2025-01-04T12``: the hour in UTC of a local hour when its
        first and last seconds are both that hour in UTC (None otherwise, or for no hour)."""
        first = parse_timestamp(f"{hour_key}:00:00", self.tz)
        last = parse_timestamp(f"{hour_key}:59:59", self.tz)
        if first is None or last is None:
            return None
        first_text = iso(first)
        hour = first_text[:13]
        whole = first_text[13:] == ":00:00+00:00" and iso(last) == f"{hour}:59:59+00:00"
        return hour if whole else None


def _fill(record: dict[str, Any], row: Mapping[str, Any], cells: list[_Cell],
          texts: _UtcTexts) -> None:
    """``record`` given each cell's value from ``row``, normalized: ``lookup``, ``normalize``
    and ``set_path`` inline, for the commonest values (text, numbers) cost a call each."""
    for target, parents, leaf, column, path in cells:
        if column in row:
            value = row[column]
        elif path is None:
            value = None
        else:
            value = row
            for part in path:
                # a dict at once: isinstance against Mapping costs ten times that
                if type(value) is not dict and not isinstance(value, Mapping) \
                        or part not in value:
                    value = None
                    break
                value = value[part]
        kind = type(value)
        if kind is str:
            if len(value) >= 16 and value[4:5] == "-":
                value = texts[value]
        elif kind not in AS_THEY_ARE:
            value = normalize(value, texts.tz)
        if parents is None:
            record[target] = value
        else:
            set_in(record, parents, leaf, value)


class Projection:
    """The record fields of a stream's rows: columns, then constants and templates; with
    the cursor's value as ``updated_at`` unless a column is mapped to it. ``where`` (like
    ``connection.streams.orders.``) prefixes errors. The configuration is read once, not
    per row: every row of a stream takes the same columns."""

    def __init__(self, spec: StreamSpec, tz: ZoneInfo, where: str = "") -> None:
        self.texts = _UtcTexts(tz)
        self.where = where
        self.cells = _cells(spec.columns)
        self.cursor = _cells({"updated_at": spec.cursor}) \
            if spec.cursor and "updated_at" not in spec.columns else None
        self.constants = list(spec.constants.items())
        self.templates = list(spec.templates.items())
        self.lines = LinesProjection(spec.lines, tz, self.texts) \
            if spec.lines is not None and spec.lines.column else None

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        record: dict[str, Any] = {}
        _fill(record, row, self.cells, self.texts)
        if self.cursor is not None:
            cursor: dict[str, Any] = {}
            _fill(cursor, row, self.cursor, self.texts)
            record.setdefault("updated_at", cursor["updated_at"])
        for target, value in self.constants:
            set_path(record, target, value)
        if self.templates:
            values = _Blank({k: "" if v is None else v for k, v in row.items()})
            for target, template in self.templates:
                try:
                    set_path(record, target, template.format_map(values))
                except (ValueError, TypeError, IndexError, AttributeError, KeyError) as exc:
                    raise SourceError(f"{self.where}templates.{target}: {template!r} cannot be"
                                      f" filled from a row: {exc}") from None
        if self.lines is not None:
            lines = self.lines.spec
            set_path(record, lines.field, self.lines.held(lookup(row, str(lines.column))[1]))
        return record


class LinesProjection:
    """The lines of an order or a cart, their columns read once (see ``Projection``)."""

    def __init__(self, spec: LinesSpec, tz: ZoneInfo, texts: _UtcTexts | None = None) -> None:
        self.spec = spec
        self.texts = texts if texts is not None else _UtcTexts(tz)
        self.cells = _cells(spec.columns)
        self.constants = list(spec.constants.items())

    def held(self, value: Any) -> Any:
        """Lines held in one column: a list (JSON Lines, Parquet) or JSON text. Anything
        else is passed on as it is, for validation to name."""
        if isinstance(value, str | bytes):
            try:
                value = exact_loads(value)
            except orjson.JSONDecodeError:
                return value
        if value is None:
            return []
        if not isinstance(value, list):
            return value
        for element in value:
            if type(element) is not dict and not isinstance(element, Mapping):
                return value
        return self(value)

    def __call__(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        lines = []
        tz = self.texts.tz
        for row in rows:
            if self.cells:
                line: dict[str, Any] = {}
                _fill(line, row, self.cells, self.texts)
            else:
                line = {str(k): normalize(v, tz) for k, v in row.items()}
            for target, constant in self.constants:
                set_path(line, target, constant)
            lines.append(line)
        return lines
