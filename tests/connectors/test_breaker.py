"""The circuit breaker on the Marketing API: an API that answers nothing for the whole stretch
is taken as down, once, with one message — on a clock the test moves, so nothing is waited
for. The API is a port nobody listens on: every connection is refused, as a dead server's."""

from __future__ import annotations

import logging
import re
import socket
from datetime import UTC, datetime, timedelta

import pytest

from connectors.http.breaker import CircuitBreaker, CircuitOpenError
from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import DestinationDown
from tests.support import new_key

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    """The breaker's time, moved by the retries' waits instead of passing."""

    def __init__(self) -> None:
        self.now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def dead_url() -> str:
    with socket.socket() as probe:  # a free port, closed again: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_an_api_that_answers_nothing_is_down_after_the_stretch_and_is_asked_no_more(
    dead_url, caplog
):
    clock = Clock()
    breaker = CircuitBreaker(60, server=dead_url, clock=clock)
    retry = RetryPolicy(sleep=clock.sleep)
    caplog.set_level(logging.WARNING)
    async with MarketingClient(dead_url, new_key(), retry=retry, breaker=breaker) as client:
        with pytest.raises(DestinationDown) as caught:
            await client.list_orders()
        down_after = (clock.now - datetime(2025, 6, 1, 12, 0, tzinfo=UTC)).total_seconds()
        attempts = client.stats.attempts
        with pytest.raises(DestinationDown):
            await client.bulk_save("customers", [{"customer_id": "c-1"}])

    # held past the policy's 6 attempts while nothing answered: the breaker decided, at 60 s
    assert down_after == pytest.approx(60, abs=0.01)
    assert attempts > retry.max_attempts
    assert client.stats.attempts == attempts, "no request is sent once the API is down"
    assert str(caught.value) == (f"{dead_url} has answered no request since 2025-06-01 12:00:00"
                                 " UTC (network errors or 5xx for 60 s; last: ConnectError)")
    assert caught.value.since == datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    (line,) = [r.getMessage() for r in caplog.records]  # one line, not one per retry
    assert re.fullmatch(rf"{re.escape(dead_url)} has answered no request for 1\d\.\d s"
                        r" \(ConnectError\); giving up in 4\d\.\d s unless it answers", line), line


def test_any_answer_ends_a_streak_of_failures():
    clock = Clock()
    breaker = CircuitBreaker(60, clock=clock)
    breaker.failure("ConnectError")
    clock.now += timedelta(seconds=50)
    breaker.success()  # a 4xx or a 429 is an answer too: the server is up
    clock.now += timedelta(seconds=50)
    breaker.failure("503 Service Unavailable")
    breaker.check()  # 100 s since the first failure, but only 0 s of this streak

    clock.now += timedelta(seconds=60)
    breaker.failure("503 Service Unavailable")

    with pytest.raises(CircuitOpenError, match="since 2025-06-01 12:01:40 UTC"):
        breaker.check()
    breaker.success()  # an answer that was on its way: the run stops anyway
    assert breaker.is_open


def test_the_stretch_must_be_positive():
    with pytest.raises(ValueError, match="positive number of seconds"):
        CircuitBreaker(0)
