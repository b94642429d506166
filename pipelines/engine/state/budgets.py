"""Request budgets shared by every process on one state database: a shop's API budget, a
destination key's, kept as the start of the next free slot and handed out in one statement.

A reservation moves the budget's ``next_at`` on by the slots it takes, from the database's
own clock when the budget has been idle (``GREATEST(next_at, now) + n × interval``), and
returns where its slots start: processes on different machines agree because they read one
clock (PostgreSQL's ``clock_timestamp()``; a SQLite file has the one machine's clock, read
once its write lock is held, ``BEGIN IMMEDIATE``). The row lock orders concurrent
reservations, so no two slots of a budget are closer than one interval, whoever took them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import text

from pipelines.engine.state.base import StoreBase
from pipelines.engine.state.sql import SQLITE_BEGIN

#: one statement per backend; ``now`` (NULL: the database's clock) is a test's clock
_RESERVE = {
    "postgresql": text(
        "WITH clock AS (SELECT COALESCE(CAST(:now AS double precision),"
        " extract(epoch FROM clock_timestamp())::double precision) AS now)"
        " INSERT INTO shopsync_request_budgets AS old (budget, next_at)"
        " SELECT :budget, clock.now + :span FROM clock"
        " ON CONFLICT (budget) DO UPDATE"
        " SET next_at = GREATEST(old.next_at, (SELECT now FROM clock)) + :span"
        " RETURNING old.next_at - :span, (SELECT now FROM clock)"),
    "sqlite": text(
        "INSERT INTO shopsync_request_budgets (budget, next_at) VALUES (:budget, :now + :span)"
        " ON CONFLICT (budget) DO UPDATE SET next_at = max(next_at, :now) + :span"
        " RETURNING next_at - :span, :now"),
}


@dataclass(frozen=True)
class Slots:
    """``count`` slots, ``interval`` seconds apart, the first at ``start``; ``now`` is when
    they were given out. Both on the database's clock: only their difference is used."""

    start: float
    now: float
    interval: float
    count: int

    def delays(self) -> list[float]:
        """Seconds from the reservation until each slot (0: at once)."""
        return [max(0.0, self.start + k * self.interval - self.now) for k in range(self.count)]


class RequestBudgets(StoreBase):
    """Slots of request budgets, shared by every process that opens the database."""

    def reserve_slots(self, budget: str, interval: float, count: int = 1, *,
                      now: float | None = None) -> Slots:
        """The next ``count`` slots of ``budget`` (``interval`` seconds apart), taken in one
        short transaction of its own (never the caller's open ``transaction()``: others
        must see it at once). Blocking: call it off the event loop. ``now`` replaces the
        database's clock (tests)."""
        if interval <= 0 or count < 1:
            raise ValueError(f"need a positive interval and count, got {interval}, {count}")
        if self._current.get() is not None:
            raise RuntimeError("reserve request slots outside a transaction(): others must"
                               " see them at once (and no network call belongs inside one)")
        with self._engine.connect() as conn:
            if self.dialect == "sqlite":
                conn.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
            with conn.begin():
                if now is None and self.dialect == "sqlite":
                    now = time.time()  # the write lock is held: read the clock in turn
                params = {"budget": budget, "span": interval * count, "now": now}
                start, at = conn.execute(_RESERVE[self.dialect], params).one()
        return Slots(float(start), float(at), interval, count)
