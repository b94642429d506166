"""How many batches the bulk writer keeps in flight: a limiter whose limit can change, and
the AIMD rule that changes it.

AIMD (additive increase, multiplicative decrease, as TCP does): halve the limit when the API
pushes back (a 429, or answers clearly slower than its recent floor while the batches in
flight deliver no more than half as many did), add one after a run of clean batches. It
finds the pace the API can take without knowing it in advance, and gives way quickly when
the API is busy with other clients. Until the first push-back it grows as TCP's slow start
does (one more per clean batch: double per round), so that a short run reaches the API's
pace instead of spending itself on the climb.
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

    ``started`` is on the controller's clock. ``in_flight``: the requests in flight when it
    was sent, itself included (None: the limit's value). ``throttled``: a 429 came while it
    ran. ``troubled``: other transient errors (5xx, network) came while it ran, so its latency
    includes retry waits and says nothing about the API's pace. ``failed``: it got no
    answer at all, even after retries, or one that stops the run (a bad key): no sign of
    the pace either way.
    """

    started: float
    latency: float
    throttled: bool = False
    troubled: bool = False
    failed: bool = False
    in_flight: int | None = None


class Aimd:
    """Additive-increase, multiplicative-decrease control of an :class:`AdaptiveLimiter`.

    Decrease (halve, not below ``minimum``) on a throttled batch, or on a slow one: a batch
    whose latency, and the recent latency (an exponential moving average, so one stray
    answer does not count), are both above ``slowdown`` times the *floor* and at least
    ``slowdown_floor`` seconds above it. The floor is the least latency of the clean
    batches answered in the last ``floor_window`` seconds: the API's pace with no queue in
    front of it. Comparing with the floor rather than with the average is what stops growth
    from driving latency up without bound (an average follows a slow climb and never sees
    it); letting the floor expire is what learns a lasting change of pace. Latency alone is
    not enough, though: an API short of CPU queues every batch yet still delivers more with
    more in flight. So a slow batch cuts only when more in flight no longer delivers more
    (TCP Vegas's and BBR's test): when the recent delivery rate (a moving average of in
    flight / latency, Little's law) is less than ``gain`` times the best recent rate seen,
    within ``floor_window``, at half the limit or less — what a cut would go back to. With
    no such rate yet, latency decides alone. (In slow start the average lags the climb, so
    growth tends to run on a little: a probe, as BBR's start-up is.) ``slowdown`` is 2
    because behind a queue latency grows with the batches in flight: halving from twice the
    floor lands back at the floor, which renews it, where a higher factor would land above
    it and the floor would creep up window after window. Batches already
    in flight when the limit was cut saw the same congestion, so only a batch started after
    the last cut can cut again (one cut per episode); for a slow batch, one started once
    the queue of the cut has drained (a recent latency later), since until then it waits
    behind that queue.

    Increase, up to ``maximum`` (a safety bound, the start value when not given): by one per
    clean batch until the first decrease (slow start: double per round), then by one after
    as many clean batches in a row as the current limit (about one round of the in-flight
    batches).

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
        slowdown: float = 2.0,
        slowdown_floor: float = 0.05,
        smoothing: float = 0.2,
        floor_window: float = 10.0,
        gain: float = 1.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limiter = limiter
        self.minimum = max(1, minimum)
        self.maximum = max(self.minimum, maximum if maximum is not None else limiter.limit)
        self.slowdown = slowdown
        self.slowdown_floor = slowdown_floor
        self.smoothing = smoothing
        self.floor_window = floor_window
        self.gain = gain
        self._clock = clock
        self._origin = clock()
        self._baseline: float | None = None
        #: (when, latency) of recent clean batches, latencies rising: the first is the floor
        self._lows: deque[tuple[float, float]] = deque()
        #: the recent delivery rate (moving average of in flight / latency, Little's law)
        self._rate: float | None = None
        #: limit -> (when, the recent delivery rate) at its latest clean batch
        self._rates: dict[int, tuple[float, float]] = {}
        self._ramping = True
        self._clean = 0
        self._last_cut = -math.inf
        #: when the batches queued at the last cut should be answered: a batch sent before
        #: that waited behind them, so its latency cannot cut again
        self._drained = -math.inf
        self.history: list[LimitChange] = [LimitChange(0.0, limiter.limit, "start")]

    @property
    def baseline(self) -> float | None:
        """The recent latency (moving average of the clean batches)."""
        return self._baseline

    @property
    def floor(self) -> float | None:
        """The least latency of the clean batches of the last ``floor_window`` seconds."""
        return self._lows[0][1] if self._lows else None

    def observe(self, signal: BatchSignal) -> None:
        slow = False
        if not (signal.throttled or signal.troubled or signal.failed):
            slow = self._learn(signal.latency)
            slow = not self._gaining(signal) and slow
        if signal.throttled or slow:
            self._clean = 0
            if signal.started >= (self._last_cut if signal.throttled else self._drained):
                self._last_cut = self._clock()
                self._drained = self._last_cut + (self._baseline or 0.0)
                self._ramping = False
                self._set(max(self.minimum, self.limiter.limit // 2),
                          "throttled" if signal.throttled else "slow")
            return
        if signal.failed:
            return
        # 5xx answers are no request to slow down (a 429 is), so a batch that got through
        # them still counts as clean
        self._clean += 1
        if self.limiter.limit >= self.maximum:
            self._clean = 0
        elif self._ramping or self._clean >= self.limiter.limit:
            self._clean = 0
            self._set(self.limiter.limit + 1, "clean")

    def _learn(self, latency: float) -> bool:
        """Take in a clean answer's latency; True when it and the recent latency are both
        clearly above the floor."""
        now = self._clock()
        lows = self._lows
        while lows and lows[-1][1] >= latency:
            lows.pop()
        lows.append((now, latency))
        while lows[0][0] < now - self.floor_window:
            lows.popleft()
        baseline = self._baseline
        self._baseline = latency if baseline is None else (
            baseline + self.smoothing * (latency - baseline))
        floor = lows[0][1]
        limit = max(floor * self.slowdown, floor + self.slowdown_floor)
        return latency > limit and self._baseline > limit

    def _gaining(self, signal: BatchSignal) -> bool:
        """Take in a clean answer's delivery rate; True when the recent rate is clearly
        above the best recent rate at half the limit or less (a cut would lose
        throughput)."""
        if signal.latency <= 0:
            return False
        now, limit = self._clock(), self.limiter.limit
        sample = (signal.in_flight or limit) / signal.latency
        rate = self._rate = sample if self._rate is None else (
            self._rate + self.smoothing * (sample - self._rate))
        self._rates[limit] = (now, rate)
        recent = now - self.floor_window
        below = [rate for lower, (when, rate) in self._rates.items()
                 if lower <= limit // 2 and when >= recent]
        return bool(below) and rate > self.gain * max(below)

    def _set(self, limit: int, reason: str) -> None:
        if limit == self.limiter.limit:
            return
        log.debug("concurrency %d -> %d (%s)", self.limiter.limit, limit, reason)
        self.limiter.set_limit(limit)
        self.history.append(LimitChange(self._clock() - self._origin, limit, reason))
