"""What one run of a stream reads, decided before it reads: the plan, then its execution
(``sync.StreamSync``).

Three kinds of read:

- *incremental*: from the stream's cursor (less the source's lookback) up to a moment
  that counts as final; the cursor advances with each chunk recorded;
- *full*: the whole stream (it has no change time to start from); what it does not see any
  more is gone at the source;
- *backfill*: a window of change time, every valid item of it sent again whatever the
  ledger says; the cursor stays where it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from connectors.sources.base import Position
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

    @property
    def advances_cursor(self) -> bool:
        return self.kind is ReadKind.INCREMENTAL

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


def plan_read(source: Source, *, incremental: bool, cursor: Position | None, clock: Clock,
              window: Window | None = None) -> ReadPlan:
    """The plan of one run of a stream: a backfill of ``window`` when one is given, else an
    incremental read from ``cursor`` (or the source's ``history_start``) when the stream
    reads by change time, else a full read. ``cursor`` is only looked at for the second."""
    if window is not None:
        return ReadPlan(ReadKind.BACKFILL, Position(window.start - timedelta(microseconds=1)),
                        window.end, window, keep_window_only=not incremental)
    # a second the shop may still write to must not be passed: stop a little short of now
    until = clock() - SETTLE
    if not incremental:
        return ReadPlan(ReadKind.FULL, None, until)
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
