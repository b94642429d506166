"""Fake Shopify shops for the connector tests: real servers on localhost, in a thread of the
test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from connectors.sources.shopify import throttle
from sandbox.shops.shopify.launch import RunningFakeShopify, start_in_thread

#: a bucket large enough that the tests read rather than wait (the throttling tests shrink it)
ROOMY = ("--bucket-size", "1000000", "--restore-rate", "1000000", "--bulk-latency", "0")


@pytest.fixture(autouse=True)
def fresh_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no cost budget in memory: the process keeps one per shop URL,
    and a fake started on a port an earlier test's fake used (with another bucket size)
    would otherwise inherit its estimate and its totals."""
    monkeypatch.setattr(throttle, "_BUDGETS", {})


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShopify]:
    """A shop never changed by the tests of a module."""
    running = start_in_thread("--orders", "150", "--customers", "30", "--products", "12", *ROOMY)
    yield running
    running.stop()


@pytest.fixture
def start_shop() -> Iterator[Callable[..., RunningFakeShopify]]:
    """Start shops of one test (to change them, or with other limits); all stop after it."""
    started: list[RunningFakeShopify] = []

    def _start(*args: str, roomy: bool = True) -> RunningFakeShopify:
        started.append(start_in_thread("--orders", "60", "--customers", "10", "--products",
                                       "6", *(ROOMY if roomy else ()), *args))
        return started[-1]

    yield _start
    for running in started:
        running.stop()
