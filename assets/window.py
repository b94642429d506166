"""The one thing a run of a sync job can be asked: which window of change time to re-read.

The sync assets are not partitioned (the README says why): a run with no window is the
incremental sync from the stored cursors; a run given ``start`` and ``end`` is a backfill of
that window, which re-reads it and leaves the cursors alone. It is a resource rather than op
config so that one entry in the Launchpad covers every step of the run.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import dagster as dg

from pipelines.engine.plan import Window

WINDOW_KEY = "sync_window"


class SyncWindow(dg.ConfigurableResource):
    """Leave both empty for the incremental sync; set both (dates, UTC, inclusive) to
    backfill the changes made in that window without moving the cursors."""

    start: str | None = None
    end: str | None = None

    def window(self) -> Window | None:
        """The window to re-read, or None for the incremental sync."""
        if self.start is None and self.end is None:
            return None
        if self.start is None or self.end is None:
            raise dg.Failure(description="a backfill needs both start and end (YYYY-MM-DD);"
                                         " leave both empty for the incremental sync")
        try:
            first, last = date.fromisoformat(self.start), date.fromisoformat(self.end)
        except ValueError as exc:
            raise dg.Failure(description=f"backfill window: {exc} (dates are YYYY-MM-DD)") \
                from None
        if last < first:
            raise dg.Failure(description=f"backfill window: end {last} is before start {first}")
        return Window(datetime.combine(first, time(), UTC),
                      datetime.combine(last + timedelta(days=1), time(), UTC))


def describe(window: Window | None) -> str:
    if window is None:
        return "incremental sync from the stored cursor"
    last = (window.end - timedelta(days=1)).date()
    return f"backfill of changes {window.start.date()} to {last} (cursor left alone)"
