"""The bulk writer's pacing rules as units (the limiter and AIMD), with made-up batch
results instead of a server, and the writer finding its pace against a mock API on a clock
that the test moves (no waiting on wall-clock time).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import AdaptiveLimiter, Aimd, BatchSignal, BulkWriter
from tests.connectors.writer_support import FAST, customer

# pacing rules, as units ----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def aimd(limit: int = 8, minimum: int = 1, maximum: int | None = None) -> tuple[Aimd, Clock]:
    clock = Clock()
    return Aimd(AdaptiveLimiter(limit), minimum=minimum, maximum=maximum, clock=clock), clock


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


def test_aimd_grows_past_its_start_on_clean_batches_and_stops_at_the_ceiling():
    control, clock = aimd(8, maximum=32)
    for _ in range(500):
        clock.now += 0.01
        control.observe(BatchSignal(started=clock.now, latency=0.05))
    limits = [s.limit for s in control.history]
    # slow start: one more per clean batch until the ceiling, never above it
    assert limits == list(range(8, 33))
    assert control.limiter.limit == 32
    clock.now += 1
    control.observe(BatchSignal(started=clock.now - 0.05, latency=0.05, throttled=True))
    assert control.limiter.limit == 16
    for _ in range(15):  # after a push-back: one more per round of clean batches
        control.observe(BatchSignal(started=clock.now, latency=0.05))
    assert control.limiter.limit == 16
    control.observe(BatchSignal(started=clock.now, latency=0.05))
    assert control.limiter.limit == 17


def test_aimd_halves_when_latency_creeps_above_its_floor_so_growth_stays_bounded():
    """An API that takes 16 batches at once at 50 ms and queues the rest (4 ms more per
    batch beyond): latency climbs a little with each step of growth. A moving average
    follows such a climb; the floor does not, so growth is cut well before the ceiling."""
    control, clock = aimd(8, maximum=64)
    latencies = []
    for _ in range(3000):
        latency = 0.05 + 0.004 * max(0, control.limiter.limit - 16)
        latencies.append(latency)
        clock.now += latency / control.limiter.limit  # a batch ends every latency/limit s
        control.observe(BatchSignal(started=clock.now - latency, latency=latency))
    cuts = [s for s in control.history if s.reason == "slow"]
    assert len(cuts) >= 3, "it never learnt where the queue starts"
    assert all(cut.limit == prior.limit // 2 for prior, cut in zip(
        control.history, control.history[1:], strict=False) if cut.reason == "slow")
    assert max(s.limit for s in control.history) < 64
    # each cut lands back where the queue starts, so the floor stays the API's own pace
    assert control.floor == pytest.approx(0.05)
    assert max(latencies[1000:]) < 0.05 * 2 + 0.01, "latency grew far past its floor"


def test_one_stray_slow_answer_does_not_cut_but_a_second_in_a_row_does():
    control, clock = aimd(8)
    for _ in range(20):
        clock.now += 0.1
        control.observe(BatchSignal(started=clock.now, latency=0.02))
    clock.now += 0.1
    control.observe(BatchSignal(started=clock.now, latency=0.2))
    assert control.limiter.limit == 8
    control.observe(BatchSignal(started=clock.now, latency=0.2))
    assert control.limiter.limit == 4
    assert control.history[-1].reason == "slow"


def test_batches_that_stop_the_run_do_not_make_the_limit_grow():
    control, _ = aimd(2, maximum=8)
    for _ in range(10):
        control.observe(BatchSignal(started=100, latency=0.01, failed=True))
    assert control.limiter.limit == 2
    assert control.baseline is None


def mock_api(throttle: set[int]) -> httpx.MockTransport:
    """Accepts every batch, after letting the other requests in flight run; the requests
    numbered in ``throttle`` are answered 429 (their retry then goes through)."""
    seen = 0

    async def handle(request: httpx.Request) -> httpx.Response:
        nonlocal seen
        seen += 1
        if seen in throttle:
            return httpx.Response(429, json={"statusCode": 429, "message": "Too Many Requests"})
        for _ in range(3):
            await asyncio.sleep(0)
        sent = len(json.loads(request.content))
        return httpx.Response(200, json={
            "statusCode": 200, "sent_count": sent, "rejected_count": 0, "rejected_items": []})

    return httpx.MockTransport(handle)


def write_on_a_still_clock(throttle: set[int], **options: int) -> BulkWriter:
    """2 000 customers through a writer whose clock never moves: every answer comes at the
    same latency (0), so only the 429s speak of the API's pace."""

    async def run() -> BulkWriter:
        async with MarketingClient("http://127.0.0.1:9/v1", "abcdefgh.key",
                                   transport=mock_api(throttle), retry=FAST) as client:
            writer = BulkWriter(client, "customers", clock=lambda: 0.0, **options)
            summary = await writer.write_all(customer(i) for i in range(2_000))
        assert summary.accepted == 2_000
        return writer

    return asyncio.run(run())


def test_the_writer_grows_from_its_start_to_its_ceiling_on_clean_batches():
    writer = write_on_a_still_clock(set(), concurrency=2, max_concurrency=6)
    limits = [s.limit for s in writer.concurrency_history]
    assert limits == [2, 3, 4, 5, 6]
    assert writer.limiter.peak == 6
    assert writer.peak_in_flight > 2


def test_the_writer_halves_its_limit_on_a_429():
    writer = write_on_a_still_clock({12}, concurrency=2, max_concurrency=6)
    steps = [(s.limit, s.reason) for s in writer.concurrency_history]
    assert steps[:6] == [(2, "start"), (3, "clean"), (4, "clean"), (5, "clean"), (6, "clean"),
                         (3, "throttled")]
    assert max(limit for limit, _ in steps) == 6


def test_the_writer_keeps_a_fixed_limit_when_not_adaptive_and_checks_its_limits():
    writer = write_on_a_still_clock(set(), concurrency=3, adaptive=False)
    assert [s.limit for s in writer.concurrency_history] == [3]
    assert writer.limiter.peak <= 3
    client = MarketingClient("http://127.0.0.1:9/v1", "abcdefgh.key")
    with pytest.raises(ValueError, match="min_concurrency <= concurrency <= max_concurrency"):
        BulkWriter(client, "customers", concurrency=8, max_concurrency=4)
    with pytest.raises(ValueError, match="got 3, 2 and 64"):
        BulkWriter(client, "customers", concurrency=2, min_concurrency=3)
    assert BulkWriter(client, "customers", concurrency=80).max_concurrency == 80


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
