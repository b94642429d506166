"""Fake WooCommerce shops for the connector tests: real servers on localhost, in a thread of the
test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    """The default fake shop (seed 0: 50 customers, 200 orders, 30 products), never changed."""
    running = start_in_thread()
    yield running
    running.stop()


@pytest.fixture
def start_shop() -> Iterator[Callable[..., RunningFakeShop]]:
    """Start shops of one test (to change them, or with faults); all stop after the test."""
    started: list[RunningFakeShop] = []

    def _start(*args: str) -> RunningFakeShop:
        started.append(start_in_thread(*args))
        return started[-1]

    yield _start
    for running in started:
        running.stop()
