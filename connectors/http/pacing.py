"""Pacing requests to a host's known limit.

Shop platforms behind a host or WAF often allow a fixed number of requests per second;
spacing requests evenly uses that budget fully without a 429 (and its Retry-After wait) on
the way. The one retry policy still handles a 429 when the limit is lower than configured.

What a client waits on is ``Pacing``: anything with ``async wait()``. ``Pacer`` paces one
process; a budget shared by several processes (the engine's, through its state database:
``pipelines/engine/budgets.py``) is handed to a client through the same ``pacer`` parameter,
so connectors know nothing of where the budget is kept.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol


class Pacing(Protocol):
    """What a client waits on before each attempt: returns when the request may go."""

    async def wait(self) -> None: ...


class Pacer:
    """At most ``rate`` requests per second, evenly spaced; no pacing when ``rate`` is None.

    ``clock`` and ``sleep`` are the time it reads and how it waits: tests pass their own, so
    that the spacing is checked as arithmetic rather than measured on a busy machine."""

    def __init__(self, rate: float | None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = self._clock()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await self._sleep(delay)
