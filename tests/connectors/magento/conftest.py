"""Fake Magento shops for the connector's tests: one default shop per module, never
changed, and shops a test starts for itself (to change them, or with faults).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.shops.magento.launch import RunningFakeMagento, start_in_thread
from tests.connectors.magento.support import Start


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeMagento]:
    """The default fake shop (seed 0: 50 customers, 200 orders, 30 products), never changed."""
    running = start_in_thread()
    yield running
    running.stop()


@pytest.fixture
def start_shop() -> Iterator[Start]:
    """Start shops of one test (to change them, or with faults); all stop after the test."""
    started: list[RunningFakeMagento] = []

    def _start(*args: str) -> RunningFakeMagento:
        started.append(start_in_thread(*args))
        return started[-1]

    yield _start
    for running in started:
        running.stop()
