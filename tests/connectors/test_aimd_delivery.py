"""The AIMD's second look at a slow batch: latency above its floor cuts the limit only when
more in flight no longer delivers more. Made-up batch results on a clock the test moves."""

from __future__ import annotations

import math

from connectors.marketing.writer import AdaptiveLimiter, Aimd, BatchSignal


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run_against_a_cpu_bound_api(gain: float) -> tuple[int, Aimd]:
    """Three seconds against an API short of CPU: every batch queues, yet more in flight
    still delivers more (400·n/(n+16) batches/s at n in flight; latency (n+16)/400 s)."""
    clock = Clock()
    control = Aimd(AdaptiveLimiter(8), maximum=64, clock=clock, gain=gain)
    delivered = 0
    while clock.now < 103:
        limit = control.limiter.limit
        latency = (limit + 16) / 400
        clock.now += latency / limit  # a batch ends every latency/limit s
        control.observe(BatchSignal(started=clock.now - latency, latency=latency,
                                    in_flight=limit))
        delivered += 1
    return delivered, control


def test_aimd_keeps_growing_while_more_in_flight_still_delivers_more():
    delivered, control = run_against_a_cpu_bound_api(1.25)
    latency_alone, by_latency = run_against_a_cpu_bound_api(math.inf)
    # latency passes twice its floor at 32; it cuts only once doubling stops paying
    # (48 in flight deliver 1.25 times what 24 do, 64 only 1.2 times what 32 do)
    cuts = [(prior.limit, cut.limit) for prior, cut in zip(
        control.history, control.history[1:], strict=False) if cut.reason == "slow"]
    assert cuts == [(64, 32)]
    assert max(s.limit for s in by_latency.history) < 40
    assert delivered > latency_alone * 1.1


def test_a_slow_batch_still_cuts_when_the_rate_is_no_better_than_at_half_the_limit():
    """An API that takes 16 at once and queues the rest: past 16 more in flight delivers
    nothing more, so latency above its floor cuts exactly as it does on latency alone."""

    def run(gain: float) -> list[tuple[int, str]]:
        clock = Clock()
        control = Aimd(AdaptiveLimiter(16), maximum=64, clock=clock, gain=gain)
        for _ in range(2000):
            limit = control.limiter.limit
            latency = 0.05 * max(1, limit / 16)
            clock.now += latency / limit
            control.observe(BatchSignal(started=clock.now - latency, latency=latency,
                                        in_flight=limit))
        return [(s.limit, s.reason) for s in control.history]

    steps = run(1.25)
    assert steps == run(math.inf)
    assert (36, "clean") in steps and (18, "slow") in steps
    assert max(limit for limit, _ in steps) < 40


def test_after_a_slow_cut_only_a_batch_sent_once_its_queue_drained_can_cut_again():
    """Batches sent just after a cut still wait behind the batches queued before it: their
    latency says nothing of the new limit. One sent a recent latency later does."""
    clock = Clock()
    control = Aimd(AdaptiveLimiter(32), clock=clock)
    for _ in range(20):
        clock.now += 0.01
        control.observe(BatchSignal(started=clock.now - 0.05, latency=0.05))
    for _ in range(3):  # the API slows down: latency four times its floor
        clock.now += 0.01
        control.observe(BatchSignal(started=clock.now - 0.2, latency=0.2))
    assert control.limiter.limit == 16
    cut = clock.now
    clock.now += 0.05
    control.observe(BatchSignal(started=cut + 0.01, latency=0.2))
    assert control.limiter.limit == 16, "a batch queued behind the cut's queue cut again"
    clock.now = cut + 0.5
    control.observe(BatchSignal(started=cut + 0.3, latency=0.2))
    assert control.limiter.limit == 8
