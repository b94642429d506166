"""How many batches the bulk writer keeps in flight: a limiter whose limit can change, and
the AIMD rule that changes it.

AIMD (additive increase, multiplicative decrease, as TCP does): halve the limit when the API
pushes back (a 429, or answers far slower than it recently did), add one after a run of
clean batches. It finds the pace the API can take without knowing it in advance, and gives
way quickly when the API is busy with other clients.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from connectors.marketing.writer.outcomes import LimitChange

log = logging.getLogger("shopsync.writer")


class AdaptiveLimiter:
    """An asyncio semaphore whose limit can change while slots are held.

    Lowering the limit takes nothing back: holders finish, and new slots are granted only
    once fewer than ``limit`` are held. Waiters are served in arrival order.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the limit must be at least 1, got {limit}")
        self._limit = limit
        self._held = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.peak = 0

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def held(self) -> int:
        return self._held

    @property
    def waiting(self) -> int:
        """Acquirers waiting for a slot: the bulk writer's input is held up while one is."""
        return len(self._waiters)

    def set_limit(self, limit: int) -> None:
        self._limit = max(1, limit)
        self._wake()

    async def acquire(self) -> None:
        if self._held < self._limit and not self._waiters:
            self._take()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted just as we were cancelled: give it back
            else:
                with suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        if self._held <= 0:
            raise RuntimeError("release() without a matching acquire()")
        self._held -= 1
        self._wake()

    def _take(self) -> None:
        self._held += 1
        self.peak = max(self.peak, self._held)

    def _wake(self) -> None:
        while self._waiters and self._held < self._limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._take()
                waiter.set_result(None)


@dataclass(frozen=True)
class BatchSignal:
    """What one bulk request tells about the API's state.

    ``started`` is on the controller's clock. ``throttled``: a 429 came while it ran.
    ``troubled``: other transient errors (5xx, network) came while it ran, so its latency
    includes retry waits and says nothing about the API's pace. ``failed``: it got no
    answer at all, even after retries.
    """

    started: float
    latency: float
    throttled: bool = False
    troubled: bool = False
    failed: bool = False


class Aimd:
    """Additive-increase, multiplicative-decrease control of an :class:`AdaptiveLimiter`.

    Decrease (halve, not below ``minimum``) on a throttled batch, or on a batch whose latency
    is above ``slowdown`` times the recent baseline (an exponential moving average) and at
    least ``slowdown_floor`` seconds above it, so that millisecond jitter on a fast API does
    not count. Batches already in flight when the limit was cut saw the same congestion, so
    only a batch started after the last cut can cut again: one cut per episode.

    Increase by one, up to ``maximum``, after as many clean batches in a row as the current
    limit (about one round of the in-flight batches).

    The signals are the transport's counters seen over each request's lifetime, so a 429
    answered to a neighbouring request counts too: with many requests in flight the writer
    reacts to the API's state rather than to its own request's luck.
    """

    def __init__(
        self,
        limiter: AdaptiveLimiter,
        *,
        minimum: int = 1,
        maximum: int | None = None,
        slowdown: float = 3.0,
        slowdown_floor: float = 0.05,
        smoothing: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limiter = limiter
        self.minimum = max(1, minimum)
        self.maximum = max(self.minimum, maximum if maximum is not None else limiter.limit)
        self.slowdown = slowdown
        self.slowdown_floor = slowdown_floor
        self.smoothing = smoothing
        self._clock = clock
        self._origin = clock()
        self._baseline: float | None = None
        self._clean = 0
        self._last_cut = -math.inf
        self.history: list[LimitChange] = [LimitChange(0.0, limiter.limit, "start")]

    @property
    def baseline(self) -> float | None:
        return self._baseline

    def observe(self, signal: BatchSignal) -> None:
        slow = False
        if not (signal.throttled or signal.troubled):
            baseline = self._baseline
            if baseline is not None:
                slow = signal.latency > max(
                    baseline * self.slowdown, baseline + self.slowdown_floor
                )
                # slow samples move the baseline too, so a lasting change of pace is learnt
                self._baseline = baseline + self.smoothing * (signal.latency - baseline)
            else:
                self._baseline = signal.latency
        if signal.throttled or slow:
            self._clean = 0
            if signal.started >= self._last_cut:
                self._last_cut = self._clock()
                self._set(max(self.minimum, self.limiter.limit // 2),
                          "throttled" if signal.throttled else "slow")
            return
        if signal.failed:
            return
        # 5xx answers are no request to slow down (a 429 is), so a batch that got through
        # them still counts as clean
        self._clean += 1
        if self._clean >= self.limiter.limit and self.limiter.limit < self.maximum:
            self._clean = 0
            self._set(self.limiter.limit + 1, "clean")

    def _set(self, limit: int, reason: str) -> None:
        if limit == self.limiter.limit:
            return
        log.debug("concurrency %d -> %d (%s)", self.limiter.limit, limit, reason)
        self.limiter.set_limit(limit)
        self.history.append(LimitChange(self._clock() - self._origin, limit, reason))
