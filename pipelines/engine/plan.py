"""What one run of a stream reads, decided before it reads: the plan, then its execution
(``sync.StreamSync``).

Three kinds of read:

- *incremental*: from the stream's cursor (less the source's lookback) up to a moment
  that counts as final; the cursor advances with each chunk recorded;
- *full*: the whole stream (it has no change time to start from); what it does not see any
  more is gone at the source;
- *backfill*: a window of change time, every valid item of it sent again whatever the
  ledger says; the cursor stays where it was.

An incremental stream's first read (no cursor yet) goes in key order when its connector can
(``ReadsByKey``): every record changed up to a moment, each chunk recorded with the last key
as its checkpoint (``key_checkpoint``), which a run cut short resumes after. Its last chunk
moves the stream's own cursor instead, to the newest record's position, where a read by
change time would have left it (after a resumed read, the newest of what it read since: the
next read starts no later than it should). Read by change time, a first sync's keys land
all over the ledger's indexes, and each chunk's transaction writes nearly a page per key; in
key order the pages fill one after another (``bench/sync.py --source sql``: see
``ReadsByKey``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import cast

from connectors.sources.base import Position, RawRecord, ReadsByKey, SourceConnector
from pipelines.engine.clock import Clock
from pipelines.engine.config import Source

#: how far behind "now" an incremental read stops: a record written later in the same second
#: as the last one read would otherwise sort before the cursor and never be read
SETTLE = timedelta(seconds=2)


@dataclass(frozen=True)
class Window:
    """A time window of change times, for backfills: it does not move the stream's cursor."""

    start: datetime
    end: datetime

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


class ReadKind(StrEnum):
    INCREMENTAL = "incremental"
    FULL = "full"
    BACKFILL = "backfill"


@dataclass(frozen=True)
class ReadPlan:
    """What a run reads, and what reading it means for the cursor and the ledger."""

    kind: ReadKind
    #: read past this position (None: from the stream's start)
    after: Position | None
    #: records changed up to here count as final (fixed at the start of the run)
    until: datetime
    #: a backfill's window
    window: Window | None = None
    #: drop what is read outside the window: a stream without change-time reads is read whole
    keep_window_only: bool = False
    #: a first read in key order: the records changed from ``after`` up to ``until``
    by_key: bool = False
    #: where a first read in key order resumes: after this key (None: from the first)
    after_key: str | None = None

    @property
    def advances_cursor(self) -> bool:
        return self.kind is ReadKind.INCREMENTAL

    def checkpoint(self, stream: str, last: Position, *,
                   ends_at: Position | None = None) -> tuple[str, Position] | None:
        """The cursor a chunk ending at ``last`` moves once recorded, and where it is kept:
        the stream's own, or a first read in key order's (``key_checkpoint``) — the stream's
        own again, at ``ends_at`` (the newest record read), for such a read's last chunk;
        None when the read moves none."""
        if self.by_key:
            if ends_at is not None:
                return stream, ends_at
            return key_checkpoint(stream), Position(self.until, last.record_id)
        return (stream, last) if self.advances_cursor else None

    def pages(self, connector: SourceConnector, stream: str) -> AsyncIterator[list[RawRecord]]:
        """``stream``'s pages as this plan reads them from ``connector``."""
        if self.by_key:
            by_key = cast(ReadsByKey, connector)
            return by_key.read_by_key(stream, after_key=self.after_key, until=self.until,
                                      since=self.after.changed_at if self.after else None)
        return connector.read(stream, after=self.after, until=self.until)

    @property
    def finds_deletions(self) -> bool:
        """A full read tells what is gone: every record not seen in it."""
        return self.kind is ReadKind.FULL

    @property
    def resends_everything(self) -> bool:
        """A backfill sends every valid item of its window whatever the ledger says (and so
        does not first send again what failed before: it maps everything afresh anyway)."""
        return self.kind is ReadKind.BACKFILL

    @property
    def run_kind(self) -> str:
        """The kind of run the ledger records."""
        return "backfill" if self.kind is ReadKind.BACKFILL else "sync"

    def keeps(self, changed_at: datetime) -> bool:
        """Whether a record read with this change time belongs to the run."""
        return self.window is None or not self.keep_window_only or changed_at in self.window


def key_checkpoint(stream: str) -> str:
    """The name under which a first read in key order keeps its checkpoint, beside the
    stream's cursor: the moment it reads up to, and the last key recorded."""
    return f"{stream}#first-read-by-key"


@dataclass(frozen=True)
class KeyCheckpoint:
    """Where a first read in key order that was cut short resumes: after ``at.record_id``,
    reading the records changed up to ``at.changed_at``."""

    at: Position

    def __str__(self) -> str:
        return (f"first read in key order, after #{self.at.record_id} (records changed up to"
                f" {self.at.changed_at.isoformat()})")


def stands_at(at: Position | KeyCheckpoint) -> str:
    """Where a stream stands, as the status, the assets and a stopped sync say it: a
    cursor's change time and record id, or a first read in key order cut short."""
    if isinstance(at, KeyCheckpoint):
        return str(at)
    return f"{at.changed_at.isoformat()} #{at.record_id}"


def resume_of(get_cursor: Callable[[str], Position | None],
              stream: str) -> Position | KeyCheckpoint | None:
    """Where ``stream``'s next run starts: after its cursor, after the last key a first read
    in key order recorded, or from its beginning (None); ``get_cursor`` reads the source's
    cursors by name."""
    cursor = get_cursor(stream)
    if cursor is not None:
        return cursor
    kept = get_cursor(key_checkpoint(stream))
    return KeyCheckpoint(kept) if kept is not None else None


def plan_read(source: Source, *, incremental: bool, cursor: Position | None, clock: Clock,
              window: Window | None = None, by_key: bool = False,
              resume_key: Position | None = None) -> ReadPlan:
    """The plan of one run of a stream: a backfill of ``window`` when one is given, else an
    incremental read from ``cursor`` (or the source's ``history_start``) when the stream
    reads by change time — in key order when it has no cursor yet and its connector can
    (``by_key``), resuming after ``resume_key`` (its ``key_checkpoint``) when one was kept —
    else a full read. ``cursor`` is only looked at for the second."""
    if window is not None:
        return ReadPlan(ReadKind.BACKFILL, Position(window.start - timedelta(microseconds=1)),
                        window.end, window, keep_window_only=not incremental)
    # a second the shop may still write to must not be passed: stop a little short of now
    until = clock() - SETTLE
    if not incremental:
        return ReadPlan(ReadKind.FULL, None, until)
    if cursor is None and by_key:
        if resume_key is not None:  # a first read cut short: the same span, further on
            return ReadPlan(ReadKind.INCREMENTAL, _start(source, None), resume_key.changed_at,
                            by_key=True, after_key=resume_key.record_id or None)
        return ReadPlan(ReadKind.INCREMENTAL, _start(source, None), until, by_key=True)
    return ReadPlan(ReadKind.INCREMENTAL, _start(source, cursor), until)


def _start(source: Source, cursor: Position | None) -> Position | None:
    """Where an incremental read starts: a little before the cursor (the source's
    lookback), or at the history start when the stream was never read."""
    if cursor is None:
        start = source.history_start
        if start is None:
            return None
        return Position(datetime(start.year, start.month, start.day, tzinfo=UTC))
    lookback = timedelta(seconds=source.lookback_seconds)
    return Position(cursor.changed_at - lookback) if lookback else cursor
