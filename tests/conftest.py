"""Shared fixtures: real sandboxes over localhost HTTP (served in a thread of the test
process unless a test asks for a process of its own), one fresh shop per test, and the
test PostgreSQL.

PostgreSQL comes from ``SHOPSYNC_TEST_POSTGRES_URL`` (``.ci/run`` sets it from
``.ci/postgres.sh``). Without the variable the PostgreSQL variants fail, unless
``SHOPSYNC_SKIP_POSTGRES=1`` says to skip them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from tests.support import RunningSandbox, new_key, new_kpi_key, start_sandbox

# Keep compiled modules (and pytest's rewritten test modules) between processes even where
# PYTHONDONTWRITEBYTECODE is set, as in CI's container: each xdist worker and each command
# a test starts would otherwise compile the project and the tests from source again, about
# 4 CPU-seconds a worker.
sys.dont_write_bytecode = False

# Property-based tests are specifications too: the same examples on every run and machine
# (derandomized, no example database), and no per-example deadline, which would make them
# depend on the machine's speed. SHOPSYNC_HYPOTHESIS=explore draws fresh examples.
settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, max_examples=1000,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("SHOPSYNC_HYPOTHESIS", "ci"))

POSTGRES_ENV = "SHOPSYNC_TEST_POSTGRES_URL"
SKIP_ENV = "SHOPSYNC_SKIP_POSTGRES"
HOW_TO = (
    f"start one with `export {POSTGRES_ENV}=$(.ci/postgres.sh)` (installs and starts a "
    f"throw-away PostgreSQL), or set {SKIP_ENV}=1 to skip the PostgreSQL variants"
)


#: the browser's tests (one `shopsync dev`, minutes in all, on one worker): first of all
FIRST = "ui"
#: folders whose tests run whole commands or Dagster runs (seconds each, several processes)
LONG = ("pipelines", "assets")
#: a module whose test keeps both cores busy with processes of its own (celery's workers, the
#: run's process, the same run in process): last, when the other workers have run out of tests
LAST = ("test_celery_executor.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser's tests first, then the modules of long tests spread evenly among the first
    two thirds of the other modules (a module's tests stay together, for its fixtures). A
    worker at a long test then shares its core with one at short tests rather than with
    another long one (all of them at once each took two to three times as long), and no worker
    is left with a long test at the end."""
    modules: dict[Path, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.path, []).append(item)
    first = [m for path, m in modules.items() if path.parent.name == FIRST]
    last = [m for path, m in modules.items() if path.name in LAST]
    long = [m for path, m in modules.items()
            if path.parent.name in LONG and path.name not in LAST]
    short = [m for path, m in modules.items() if path.parent.name not in (FIRST, *LONG)]
    every = max(1, (2 * len(short)) // (3 * len(long))) if long else 1
    spread: list[list[pytest.Item]] = []
    for n, module in enumerate(short):
        if n % every == 0 and long:
            spread.append(long.pop(0))
        spread.append(module)
    items[:] = [item for module in (*first, *spread, *long, *last) for item in module]


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

    def _start(*args: str, own_process: bool = False) -> RunningSandbox:
        running = start_sandbox(*args, own_process=own_process)
        started.append(running)
        return running

    yield _start
    for running in started:
        running.stop()


@pytest.fixture
def start() -> Iterator[Callable[..., RunningSandbox]]:
    """Start sandboxes with their own options (``own_process=True``: as a process of its
    own, for a test whose subject is the process); all are stopped after the test."""
    yield from _starter()


@pytest.fixture(scope="module")
def start_for_module() -> Iterator[Callable[..., RunningSandbox]]:
    """Like ``start``, for sandboxes shared by the tests of one module."""
    yield from _starter()


@pytest.fixture
def fresh_key() -> Callable[[], str]:
    """Makes keys of new, empty shops (for tests that need two shops)."""
    return new_key


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An engine on the test database, for creating and dropping per-test schemas."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"PostgreSQL variant skipped: {SKIP_ENV}=1")
        pytest.fail(
            f"{POSTGRES_ENV} is not set: the PostgreSQL variants need a server;\n{HOW_TO}",
            pytrace=False,
        )
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    problem = None
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        problem = str(exc.orig).strip()
    if problem is not None:  # failed outside the except block: no chained traceback
        engine.dispose()
        pytest.fail(f"cannot connect to {POSTGRES_ENV}: {problem}\n{HOW_TO}", pytrace=False)
    yield engine
    engine.dispose()
