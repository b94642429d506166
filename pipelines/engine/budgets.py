"""Request budgets shared by every run, whichever process or machine it runs in: a shop's
``requests_per_second`` (keyed by the shop's address) and a destination key's
(``destination.requests_per_second``, keyed by the API's address and the name of the
variable holding the key — never the key itself).

Each process's clients wait on a ``SharedPacer`` (a ``connectors.http.pacing.Pacing``)
that reserves its slots in the state database (``StateStore.reserve_slots``), so two runs
against one shop, or fifty against one key, together stay within the budget. Nothing is
queued: a process reserves a slot when it has a request to send and sleeps until it. Where
no budget is configured there is no pacer, and no database round-trip.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from pipelines.engine.config import Destination, Source
from pipelines.engine.state.budgets import Slots

#: reservations per second one process makes of one budget, at most: above it, slots are
#: reserved in blocks (a reservation costs ~0.2 ms on SQLite and ~1 ms on PostgreSQL over
#: loopback; see the README), so that a fast budget does not turn into a hot row
RESERVATIONS_PER_SECOND = 50.0


class Offload(Protocol):
    """Runs a blocking call without blocking the event loop (``asyncio.to_thread``)."""

    def __call__(self, call: Callable[[str, float, int], Slots], budget: str,
                 interval: float, count: int, /) -> Awaitable[Slots]: ...


class SlotSource(Protocol):
    """Where slots come from: the state store (``RequestBudgets``)."""

    def reserve_slots(self, budget: str, interval: float, count: int = 1, *,
                      now: float | None = None) -> Slots: ...


class SharedPacer:
    """At most ``rate`` requests per second for every process reserving from ``budget``.

    Slots are reserved ``block`` at a time (default: enough that this process makes at
    most ``RESERVATIONS_PER_SECOND`` reservations), off the event loop. A slot of a block
    that has passed by more than one interval when a request comes is dropped rather than
    used late: using it would crowd the next slot, maybe another process's. ``clock`` and
    ``sleep`` are the process's time, ``offload`` how the blocking reservation leaves the
    event loop (tests pass their own, to check the arithmetic on a clock of theirs)."""

    def __init__(self, store: SlotSource, budget: str, rate: float, *, block: int | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 offload: Offload = asyncio.to_thread) -> None:
        if rate <= 0:
            raise ValueError(f"a budget's rate must be positive, got {rate}")
        self.budget = budget
        self.interval = 1.0 / rate
        self.block = block or max(1, math.ceil(rate / RESERVATIONS_PER_SECOND))
        self._store = store
        self._clock = clock
        self._sleep = sleep
        self._offload = offload
        self._due: deque[float] = deque()  # this process's reserved slots, on ``clock``
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"SharedPacer({self.budget!r}, every {self.interval:.3f} s)"

    async def wait(self) -> None:
        async with self._lock:
            while self._due and self._due[0] < self._clock() - self.interval:
                self._due.popleft()
            if not self._due:
                slots = await self._offload(self._store.reserve_slots, self.budget,
                                            self.interval, self.block)
                received = self._clock()
                self._due.extend(received + delay for delay in slots.delays())
            due = self._due.popleft()
        delay = due - self._clock()
        if delay > 0:
            await self._sleep(delay)


def shop_pacer(store: SlotSource, source: Source) -> SharedPacer | None:
    """The shared budget of ``source``'s shop (its ``connection.options.requests_per_second``,
    keyed by ``connection.url``), or None when it sets none."""
    rate = source.connection.options.get("requests_per_second")
    if not rate or not source.connection.url:
        return None
    return SharedPacer(store, f"shop {source.connection.url.rstrip('/')}", float(rate))


def destination_pacer(store: SlotSource, destination: Destination) -> SharedPacer | None:
    """The shared budget of the destination's key, or None when it sets none."""
    if destination.requests_per_second is None:
        return None
    return SharedPacer(store, f"destination {destination.base_url} {destination.api_key_env}",
                       destination.requests_per_second)
