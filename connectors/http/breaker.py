"""A circuit breaker over one server: when every request has failed for a whole stretch, the
server is taken as down and no request is sent any more.

The retry policy (``retry.py``) bounds each request on its own; a server that is down makes
every request fail the same way, one after the other, each spending its whole retry budget
while the caller keeps producing work. The breaker sees all the requests of one caller
(a run) together: network errors and 5xx answers open a streak of failures, any other answer
ends it, and a streak that lasts ``open_after`` seconds opens the breaker for good — every
request from then on raises :class:`CircuitOpenError` at once, so the caller stops and says
why. A 429 or a 4xx is an answer: the server is up.

One breaker per run: once open it stays open, there is no half-open probing (the next run
starts with a new one). Time is the injected ``clock``, so tests move it instead of waiting.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from datetime import UTC, datetime

log = logging.getLogger("shopsync.http")

#: the breaker's "now": aware, in UTC
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class CircuitOpenError(Exception):
    """Every request to the server failed for the breaker's whole stretch; none is sent now."""

    def __init__(self, server: str, since: datetime, open_after: float, last_error: str) -> None:
        self.server = server
        self.since = since
        self.open_after = open_after
        self.last_error = last_error
        super().__init__(
            f"{server} has answered no request since {since:%Y-%m-%d %H:%M:%S} UTC"
            f" (network errors or 5xx for {open_after:g} s; last: {last_error})"
        )


class CircuitBreaker:
    """Opens after ``open_after`` seconds in which every request failed (network, 5xx).

    ``failure``/``success`` are told the result of every attempt; ``check`` raises once the
    breaker is open. ``streak`` numbers the streaks of failures, so a request can tell
    whether anything succeeded since it began failing (see ``retry.async_retrying``).
    """

    def __init__(self, open_after: float = 60.0, *, server: str = "the server",
                 clock: Clock = utc_now) -> None:
        if not open_after > 0:
            raise ValueError(f"open_after must be a positive number of seconds, got {open_after}")
        self.open_after = open_after
        self.server = server
        self._clock = clock
        self.failing_since: datetime | None = None
        self.last_error = ""
        self.streak = 0
        self.is_open = False
        self._warned = False

    def __repr__(self) -> str:
        state = "open" if self.is_open else "failing" if self.failing_since else "closed"
        return f"CircuitBreaker({self.server!r}, {state})"

    def failure(self, what: str) -> None:
        """A network error or a 5xx answer (``what`` names it for the message)."""
        now = self._clock()
        self.last_error = what
        if self.failing_since is None:
            self.failing_since = now
            self.streak += 1
            self._warned = False
        failing = (now - self.failing_since).total_seconds()
        if failing >= self.open_after:
            self.is_open = True
        elif failing >= self.open_after / 4 and not self._warned:
            # the one line while it lasts: retries themselves are not logged one by one
            self._warned = True
            log.warning("%s has answered no request for %.1f s (%s); giving up in %.1f s"
                        " unless it answers", self.server, failing, what,
                        self.open_after - failing)

    def success(self) -> None:
        """Any answer that is not a 5xx: the server is up."""
        if self.failing_since is not None and self._warned and not self.is_open:
            log.warning("%s answers again, after %.1f s", self.server,
                        (self._clock() - self.failing_since).total_seconds())
        if not self.is_open:
            self.failing_since = None

    def check(self) -> None:
        """Raise :class:`CircuitOpenError` when the breaker is open."""
        if self.is_open:
            assert self.failing_since is not None
            raise CircuitOpenError(self.server, self.failing_since, self.open_after,
                                   self.last_error)

    def seconds_left(self) -> float:
        """Seconds until the current streak opens the breaker (infinite when none runs)."""
        if self.failing_since is None:
            return math.inf
        failing = (self._clock() - self.failing_since).total_seconds()
        return max(0.0, self.open_after - failing)
