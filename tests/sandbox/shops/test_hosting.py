"""The hosting layer's rate limit as arithmetic: a token bucket on the test's clock. The
fakes' own tests check, over HTTP, the 429 each platform answers with it."""

from __future__ import annotations

import pytest

from sandbox.shops.hosting import TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_lets_its_burst_through_at_one_instant_and_refuses_the_next() -> None:
    bucket = TokenBucket(3, clock=Clock())
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]  # the burst: as many as the rate
    assert bucket.take() == pytest.approx(1 / 3)  # the seconds until a token is back


def test_a_refused_request_passes_once_a_token_is_back() -> None:
    clock = Clock()
    bucket = TokenBucket(4, clock=clock)
    for _ in range(4):
        bucket.take()
    assert bucket.take() == 0.25
    clock.now += 0.125
    assert bucket.take() == 0.125  # a refusal takes no token: half of one is back
    clock.now += 0.125
    assert bucket.take() == 0.0
    assert bucket.take() == pytest.approx(0.25)


def test_an_idle_bucket_fills_up_to_its_burst_only() -> None:
    clock = Clock()
    bucket = TokenBucket(5, clock=clock)
    clock.now += 3600
    assert [bucket.take() for _ in range(6)][4:] == [0.0, pytest.approx(0.2)]


def test_under_one_request_a_second_the_burst_is_one() -> None:
    clock = Clock()
    bucket = TokenBucket(0.5, clock=clock)
    assert bucket.take() == 0.0
    assert bucket.take() == pytest.approx(2.0)
    clock.now += 2.0
    assert bucket.take() == 0.0


def test_a_drained_bucket_refuses_the_next_request_however_late_it_comes() -> None:
    clock = Clock()
    bucket = TokenBucket(10, clock=clock)
    bucket.drain()
    clock.now += 60  # a slow machine: no refill counts before the next request met the drain
    assert bucket.take() == pytest.approx(0.1)
    clock.now += 0.1  # then it refills as ever
    assert bucket.take() == 0.0
    bucket.drain(2)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, pytest.approx(0.1)]
