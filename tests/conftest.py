"""Shared fixtures: real sandboxes over localhost HTTP, one fresh shop per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.support import RunningSandbox, new_key, new_kpi_key, start_sandbox


@pytest.fixture(scope="session")
def sandbox() -> Iterator[RunningSandbox]:
    """One sandbox for the session: no visibility delay, any well-formed key is a new shop."""
    running = start_sandbox("--accept-any-key", "--visibility-delay", "0")
    yield running
    running.stop()


@pytest.fixture
def api(sandbox: RunningSandbox) -> httpx.Client:
    """A client of a fresh, empty shop of the session sandbox."""
    return sandbox.client(new_key())


@pytest.fixture
def kpi_api(sandbox: RunningSandbox) -> httpx.Client:
    """A client of a fresh shop on the custom KPI endpoints (their own key pattern)."""
    return sandbox.client(new_kpi_key())


def _starter() -> Iterator[Callable[..., RunningSandbox]]:
    started: list[RunningSandbox] = []

    def _start(*args: str) -> RunningSandbox:
        running = start_sandbox(*args)
        started.append(running)
        return running

    yield _start
    for running in started:
        running.stop()


@pytest.fixture
def start() -> Iterator[Callable[..., RunningSandbox]]:
    """Start sandboxes with their own options; all are stopped after the test."""
    yield from _starter()


@pytest.fixture(scope="module")
def start_for_module() -> Iterator[Callable[..., RunningSandbox]]:
    """Like ``start``, for sandboxes shared by the tests of one module."""
    yield from _starter()


@pytest.fixture
def fresh_key() -> Callable[[], str]:
    """Makes keys of new, empty shops (for tests that need two shops)."""
    return new_key
