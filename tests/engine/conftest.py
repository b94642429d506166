"""Fixtures for the engine's tests: each state-store test runs on SQLite and on PostgreSQL,
and each end-to-end sync test gets its source set up by ``engine_setup``, or by its
platform's driver (tests/engine/drivers) as ``setup`` (to change) or ``first_sync`` (to
read).

PostgreSQL comes from the ``postgres_admin`` fixture (tests/conftest.py). Each test gets its
own PostgreSQL schema (through ``search_path``) and a session time zone other than UTC, so
time-zone handling is tested too.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from pipelines.engine.config import parse_config
from pipelines.engine.state import StateStore
from tests.engine.drivers.base import Driver, FirstSync
from tests.engine.support import EngineSetup, MakeSetup, MovableClock, S
from tests.support import new_key

if TYPE_CHECKING:
    from tests.support import RunningSandbox

#: not UTC, and not a whole hour off it: a time-zone slip shows
PG_SESSION_TIME_ZONE = "Asia/Kathmandu"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """The URL of an empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{os.path.join(tmp_path, 'home', 'state.db')}"
        return
    admin: Engine = request.getfixturevalue("postgres_admin")
    schema = f"test_{secrets.token_hex(6)}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    options = f"-csearch_path={schema} -ctimezone={PG_SESSION_TIME_ZONE}"
    url = make_url(admin.url).update_query_dict({"options": options})
    yield url.render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def open_store(db_url: str) -> Iterator[Callable[..., StateStore]]:
    """Opens stores on the test's database (``open_store()``, or with keyword options);
    all are closed after the test."""
    opened: list[StateStore] = []

    def _open(**kwargs: object) -> StateStore:
        store = StateStore(db_url, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Callable[..., StateStore]) -> StateStore:
    """A store on an empty database."""
    return open_store()


#: the environment variable the setups' destination takes its key from
API_KEY_ENV = "T_API_KEY"


class SetupFactory:
    """Makes setups of sources, each to a fresh shop of the session sandbox with a SQLite
    state store in ``root`` and a clock of its own; ``close`` closes their stores."""

    def __init__(self, sandbox: RunningSandbox, root: Path, fresh_key: Callable[[], str]):
        self.sandbox, self.root, self.fresh_key = sandbox, root, fresh_key
        self.made: list[EngineSetup] = []

    def __call__(self, kind: type[S], source: Mapping[str, Any], *,
                 env: Mapping[str, str] | None = None, **fields: Any) -> S:
        key = self.fresh_key()
        config = parse_config({
            "destination": {"base_url": self.sandbox.base_url, "api_key_env": API_KEY_ENV},
            "sources": [{"data_source": {"label": f"{source['platform']} test"},
                         "lookback_seconds": 0, **source}],
        })
        name = f"state-{len(self.made)}.db" if self.made else "state.db"
        state = StateStore(f"sqlite:///{self.root / name}")
        setup = kind(config=config, env={API_KEY_ENV: key, **(env or {})}, state=state,
                     api=self.sandbox.client(key), stats_url=self.sandbox.root + "/_sandbox/stats",
                     clock=MovableClock(), **fields)
        self.made.append(setup)
        return setup

    def close(self) -> None:
        for setup in self.made:
            setup.state.close()


@pytest.fixture
def engine_setup(sandbox: RunningSandbox, tmp_path: Path,
                 fresh_key: Callable[[], str]) -> Iterator[MakeSetup]:
    """Sets sources up for a sync test (``SetupFactory``; the stores are closed after the
    test); the platform's part (its fake, connection and secrets) is the test module's."""
    factory = SetupFactory(sandbox, tmp_path, fresh_key)
    yield factory
    factory.close()


@pytest.fixture
def setup(driver: Driver, engine_setup: MakeSetup, tmp_path: Path) -> Iterator[EngineSetup]:
    """A setup on a fresh fake source of the test's platform ``driver``
    (tests/engine/drivers), which the test may change; the fake is stopped after it."""
    started = driver.start(engine_setup, tmp_path)
    yield started
    driver.stop(started)


@pytest.fixture(scope="module")
def first_syncs() -> Iterator[dict[str, FirstSync]]:
    """The first syncs of the module's tests, one per platform, made on first use (by
    ``first_sync``): the tests that only read what a first sync left share it."""
    made: dict[str, FirstSync] = {}
    yield made
    for synced in made.values():
        synced.driver.stop(synced.setup)
        synced.setup.state.close()


@pytest.fixture
def first_sync(driver: Driver, first_syncs: dict[str, FirstSync],
               sandbox: RunningSandbox, tmp_path_factory: pytest.TempPathFactory) -> FirstSync:
    """A fake source of ``driver``'s platform after one full sync, shared by the module's
    tests of that platform: a test must not change it (``setup`` is for that)."""
    if driver.platform not in first_syncs:
        factory = SetupFactory(sandbox, tmp_path_factory.mktemp(driver.platform), new_key)
        started = driver.start(factory, factory.root)
        first_syncs[driver.platform] = FirstSync(driver, started, started.run_by_stream())
    return first_syncs[driver.platform]
