"""Fixtures for the engine's tests: each state-store test runs on SQLite and on PostgreSQL,
and each end-to-end sync test gets its source set up by ``engine_setup``.

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
from tests.engine.support import EngineSetup, MakeSetup, MovableClock, S

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


@pytest.fixture
def engine_setup(sandbox: RunningSandbox, tmp_path: Path,
                 fresh_key: Callable[[], str]) -> Iterator[MakeSetup]:
    """Sets sources up for a sync test, each to a fresh shop of the session sandbox with a
    SQLite state store and a clock of its own (the store is closed after the test); the
    platform's part (its fake, connection and secrets) is the test module's."""
    made: list[EngineSetup] = []

    def make(kind: type[S], source: Mapping[str, Any], *,
             env: Mapping[str, str] | None = None, **fields: Any) -> S:
        key = fresh_key()
        config = parse_config({
            "destination": {"base_url": sandbox.base_url, "api_key_env": API_KEY_ENV},
            "sources": [{"data_source": {"label": f"{source['platform']} test"},
                         "lookback_seconds": 0, **source}],
        })
        name = f"state-{len(made)}.db" if made else "state.db"
        state = StateStore(f"sqlite:///{tmp_path / name}")
        setup = kind(config=config, env={API_KEY_ENV: key, **(env or {})}, state=state,
                     api=sandbox.client(key), stats_url=sandbox.root + "/_sandbox/stats",
                     clock=MovableClock(), **fields)
        made.append(setup)
        return setup

    yield make
    for setup in made:
        setup.state.close()
