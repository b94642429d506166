"""Pacing requests to a host's limit, as arithmetic: the pacer reads the test's clock and
sleeps on it, so nothing here depends on the machine's speed. The acceptance suite checks
the same against each fake over HTTP, on what the fake counted."""

from __future__ import annotations

import asyncio

import pytest

from connectors.http.pacing import Pacer
from sandbox.shops.hosting import TokenBucket


class Time:
    """A clock that moves only when slept on, or when the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def pacer(rate: float | None, time: Time) -> Pacer:
    return Pacer(rate, clock=time, sleep=time.sleep)


async def send(pacer: Pacer, time: Time, n: int, *, each: float = 0.0) -> list[float]:
    """When each of ``n`` requests in a row leaves, each taking ``each`` seconds."""
    sent = []
    for _ in range(n):
        await pacer.wait()
        sent.append(time.now)
        time.now += each
    return sent


def test_paced_requests_leave_one_interval_apart_the_first_at_once() -> None:
    time = Time()
    sent = asyncio.run(send(pacer(20, time), time, 5))
    assert sent == pytest.approx([1000.0, 1000.05, 1000.10, 1000.15, 1000.20])


def test_the_time_a_request_takes_counts_towards_the_interval() -> None:
    time = Time()
    sent = asyncio.run(send(pacer(20, time), time, 4, each=0.03))
    assert sent == pytest.approx([1000.0, 1000.05, 1000.10, 1000.15])
    assert time.slept == pytest.approx([0.02, 0.02, 0.02])  # only what was left to wait


def test_requests_slower_than_the_rate_never_wait() -> None:
    time = Time()
    assert asyncio.run(send(pacer(20, time), time, 4, each=0.08)) == pytest.approx(
        [1000.0, 1000.08, 1000.16, 1000.24])
    assert time.slept == []


def test_concurrent_requests_take_one_slot_each() -> None:
    time = Time()
    waits: list[float] = []

    async def record(seconds: float) -> None:  # the clock stands still while they wait
        waits.append(seconds)

    async def burst() -> None:
        paced = Pacer(10, clock=time, sleep=record)
        await asyncio.gather(*(paced.wait() for _ in range(5)))

    asyncio.run(burst())
    assert sorted(waits) == pytest.approx([0.1, 0.2, 0.3, 0.4])  # and one left at once


def test_without_a_rate_nothing_waits() -> None:
    time = Time()
    assert asyncio.run(send(pacer(None, time), time, 50)) == [1000.0] * 50
    assert time.slept == []


@pytest.mark.parametrize("rate", [1, 4, 20, 0.5])
def test_a_read_paced_at_the_hosts_rate_is_never_refused(rate: float) -> None:
    """The host's bucket (the fakes' rate limit) on the same clock as the pacer: requests
    taking no time at all, the hardest case, are all let in."""
    time = Time()
    bucket = TokenBucket(rate, clock=time)
    paced = pacer(rate, time)

    async def read() -> list[float]:
        refusals = []
        for _ in range(200):
            await paced.wait()
            refusals.append(bucket.take())
        return refusals

    assert asyncio.run(read()) == [0.0] * 200


def test_the_same_read_unpaced_is_refused_past_the_burst() -> None:
    time = Time()
    bucket = TokenBucket(20, clock=time)
    refusals = [bucket.take() for _ in range(24)]  # all at one instant
    assert refusals[:20] == [0.0] * 20
    assert refusals[20:] == pytest.approx([0.05] * 4)  # each told a token is 1/20 s away
