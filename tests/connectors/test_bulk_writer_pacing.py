"""The bulk writer's pacing rules as units (the limiter and AIMD), with made-up batch
results instead of a server.
"""

from __future__ import annotations

import asyncio

import pytest

from connectors.marketing.writer import AdaptiveLimiter, Aimd, BatchSignal

# pacing rules, as units ----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def aimd(limit: int = 8, minimum: int = 1) -> tuple[Aimd, Clock]:
    clock = Clock()
    return Aimd(AdaptiveLimiter(limit), minimum=minimum, clock=clock), clock


def test_aimd_halves_on_429_once_per_episode_and_not_below_the_minimum():
    control, clock = aimd(8, minimum=3)
    clock.now = 101
    control.observe(BatchSignal(started=100.5, latency=0.5, throttled=True))
    assert control.limiter.limit == 4
    # batches in flight before the cut saw the same congestion: no second cut
    control.observe(BatchSignal(started=100.7, latency=0.3, throttled=True))
    assert control.limiter.limit == 4
    clock.now = 102
    control.observe(BatchSignal(started=101.5, latency=0.5, throttled=True))
    assert control.limiter.limit == 3
    assert [(s.limit, s.reason) for s in control.history] == [
        (8, "start"), (4, "throttled"), (3, "throttled")]


def test_aimd_climbs_one_step_per_round_of_clean_batches_up_to_the_maximum():
    control, clock = aimd(8)
    control.observe(BatchSignal(started=100, latency=0.01, throttled=True))
    control.observe(BatchSignal(started=101, latency=0.01, throttled=True))
    assert control.limiter.limit == 2
    for _ in range(100):
        clock.now += 0.01
        control.observe(BatchSignal(started=clock.now, latency=0.01))
    limits = [s.limit for s in control.history]
    assert limits == [8, 4, 2, 3, 4, 5, 6, 7, 8]
    assert control.limiter.limit == 8  # and never above the configured maximum


def test_aimd_backs_off_when_latency_jumps_and_learns_a_lasting_change():
    control, clock = aimd(8)
    for _ in range(20):
        clock.now += 0.1
        control.observe(BatchSignal(started=clock.now, latency=0.02))
    assert control.limiter.limit == 8
    clock.now += 0.1
    control.observe(BatchSignal(started=clock.now, latency=0.03))  # jitter: no cut
    assert control.limiter.limit == 8
    for _ in range(60):  # the API is now ten times slower, for good
        clock.now += 1
        control.observe(BatchSignal(started=clock.now, latency=0.2))
    reasons = [s.reason for s in control.history]
    assert "slow" in reasons
    assert reasons[-1] == "clean", "it never climbed again once the new pace was learnt"
    assert control.baseline == pytest.approx(0.2, rel=0.01)


def test_aimd_ignores_the_latency_of_batches_that_waited_for_retries():
    control, _ = aimd(8)
    control.observe(BatchSignal(started=100, latency=0.02))
    control.observe(BatchSignal(started=100, latency=5.0, troubled=True))
    assert control.limiter.limit == 8
    assert control.baseline == 0.02


def test_aimd_climbs_through_5xx_but_not_on_batches_that_got_no_answer():
    control, _ = aimd(8)
    control.observe(BatchSignal(started=100, latency=0.01, throttled=True))
    assert control.limiter.limit == 4
    for _ in range(10):
        control.observe(BatchSignal(started=101, latency=0.01, failed=True, troubled=True))
    assert control.limiter.limit == 4
    for _ in range(4):
        control.observe(BatchSignal(started=101, latency=2.0, troubled=True))
    assert control.limiter.limit == 5


def test_the_limiter_honours_a_limit_that_changes_while_held():
    async def run() -> list[str]:
        limiter = AdaptiveLimiter(2)
        events: list[str] = []
        await limiter.acquire()
        await limiter.acquire()
        limiter.set_limit(1)
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        limiter.release()  # 1 held, limit 1: still waiting
        await asyncio.sleep(0)
        events.append(f"waiting={not waiter.done()}")
        limiter.set_limit(3)
        await asyncio.sleep(0)
        events.append(f"granted={waiter.done()} held={limiter.held}")
        cancelled = [asyncio.create_task(limiter.acquire()) for _ in range(2)]
        await asyncio.sleep(0)
        for task in cancelled:
            task.cancel()
        await asyncio.gather(*cancelled, return_exceptions=True)
        events.append(f"held={limiter.held} peak={limiter.peak}")
        return events

    assert asyncio.run(run()) == ["waiting=True", "granted=True held=2", "held=3 peak=3"]
