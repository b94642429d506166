"""Pacing requests to a host's known limit.

Shop platforms behind a host or WAF often allow a fixed number of requests per second;
spacing requests evenly uses that budget fully without a 429 (and its Retry-After wait) on
the way. The one retry policy still handles a 429 when the limit is lower than configured.
"""

from __future__ import annotations

import asyncio
import time


class Pacer:
    """At most ``rate`` requests per second, evenly spaced; no pacing when ``rate`` is None."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)
