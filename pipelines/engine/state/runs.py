"""The runs (when each began, how it ended, with its counts) and the cursors (where each
stream's next incremental read starts) of the state store."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Connection, func, select

from connectors.sources.base import Position
from pipelines.engine.state.base import StoreBase, utc_now
from pipelines.engine.state.models import RunRecord
from pipelines.engine.state.schema import cursors, runs
from pipelines.engine.state.sql import cursor_upsert, run_from_row


class Runs(StoreBase):
    """Each run of a source, a stream or a resource: sync, reconciliation, audit…"""

    def start_run(
        self,
        source: str,
        resource: str | None,
        kind: str,
        window_start: datetime | None = None,
        window_end: datetime | None = None,
    ) -> int:
        """Record that a run began (status ``running``); returns its id.

        Older runs of the same source and stream (or resource; ``None`` for a whole source)
        still ``running`` are marked ``interrupted``: their process was killed, or lost, before
        it could say how they ended. The rule cannot tell a dead process from a live one, but
        there is never a live one: the engine's runs hold their source's lease
        (``lease.py``), so two runs of one source never run at once. (Were one to, its own
        ``finish_run`` would put its real outcome back.)
        """
        now = utc_now()
        same = runs.c.resource.is_(None) if resource is None else runs.c.resource == resource
        with self._connection(write=True) as conn:
            conn.execute(
                runs.update()
                .where(runs.c.source == source, same, runs.c.status == "running")
                .values(status="interrupted",
                        error=f"still running when a new run started at {now:%Y-%m-%d %H:%M:%S}"
                              " UTC: its process was killed or lost")
            )
            result = conn.execute(
                runs.insert().values(
                    source=source,
                    resource=resource,
                    kind=kind,
                    status="running",
                    window_start=window_start,
                    window_end=window_end,
                    started_at=now,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
        run_id = int(key[0])
        self._runs.set((*self._runs.get(), (run_id, source, resource, kind)))
        return run_id

    def finish_run(
        self,
        run_id: int,
        status: str,
        counts: Mapping[str, int | float],
        error: str | None = None,
    ) -> None:
        with self._connection(write=True) as conn:
            result = conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(status=status, finished_at=utc_now(), counts=dict(counts), error=error)
            )
            if result.rowcount == 0:
                raise KeyError(f"no run {run_id}")
        self._runs.set(tuple(run for run in self._runs.get() if run[0] != run_id))

    def get_run(self, run_id: int) -> RunRecord | None:
        with self._connection() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).one_or_none()
        return run_from_row(row) if row is not None else None

    def recent_runs(self, source: str | None = None, limit: int = 20) -> list[RunRecord]:
        """The latest runs first."""
        query = select(runs).order_by(runs.c.id.desc()).limit(limit)
        if source is not None:
            query = query.where(runs.c.source == source)
        with self._connection() as conn:
            return [run_from_row(row) for row in conn.execute(query)]

    def latest_runs(self, source: str, kind: str) -> dict[str, RunRecord]:
        """The latest finished run of ``kind`` per resource (or stream) of ``source``."""
        latest = (
            select(func.max(runs.c.id))
            .where(runs.c.source == source, runs.c.kind == kind,
                   runs.c.finished_at.is_not(None), runs.c.resource.is_not(None))
            .group_by(runs.c.resource)
        )
        with self._connection() as conn:
            rows = conn.execute(select(runs).where(runs.c.id.in_(latest)))
            return {row.resource: run_from_row(row) for row in rows}


class Cursors(StoreBase):
    """One position per (source, stream): the last change a sync stored."""

    def get_cursor(self, source: str, stream: str) -> Position | None:
        query = select(cursors.c.changed_at, cursors.c.record_id).where(
            cursors.c.source == source, cursors.c.stream == stream
        )
        with self._connection() as conn:
            row = conn.execute(query).one_or_none()
        return Position(row.changed_at, row.record_id) if row is not None else None

    def set_cursor(self, source: str, stream: str, position: Position) -> None:
        """Move the stream's cursor to ``position`` (backwards too: that is a reset)."""
        with self._connection(write=True) as conn:
            self._write_cursor(conn, source, stream, position, utc_now())

    def cursors(self, source: str | None = None) -> dict[tuple[str, str], Position]:
        """Every cursor, by (source, stream): for status pages."""
        query = select(cursors).order_by(cursors.c.source, cursors.c.stream)
        if source is not None:
            query = query.where(cursors.c.source == source)
        with self._connection() as conn:
            return {
                (row.source, row.stream): Position(row.changed_at, row.record_id)
                for row in conn.execute(query)
            }

    def delete_cursor(self, source: str, stream: str) -> None:
        """Forget the stream's cursor: the next run reads the stream from its beginning."""
        with self._connection(write=True) as conn:
            conn.execute(
                cursors.delete().where(cursors.c.source == source, cursors.c.stream == stream)
            )

    def _write_cursor(
        self, conn: Connection, source: str, stream: str, position: Position, now: datetime
    ) -> None:
        conn.execute(cursor_upsert(self.dialect, source, stream, position, now))
