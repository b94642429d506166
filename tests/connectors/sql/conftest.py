"""Real databases for the SQL connector's tests: a SQLite file, and a schema of its own on
the test PostgreSQL (``SHOPSYNC_TEST_POSTGRES_URL``, with a session time zone that is not
UTC, so that a zone slip shows). Without the variable the PostgreSQL variants fail, unless
``SHOPSYNC_SKIP_POSTGRES=1`` says to skip them — as the engine's tests do."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from connectors.sources.sql import SqlConfig, SqlConnector
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import Shop, generate
from sandbox.shops.sql.db import FakeDatabase

POSTGRES_ENV = "SHOPSYNC_TEST_POSTGRES_URL"
SKIP_ENV = "SHOPSYNC_SKIP_POSTGRES"
SESSION_TIME_ZONE = "Asia/Kathmandu"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Engine]:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"PostgreSQL variant skipped: {SKIP_ENV}=1")
        pytest.fail(f"{POSTGRES_ENV} is not set: export {POSTGRES_ENV}=$(.ci/postgres.sh), or"
                    f" set {SKIP_ENV}=1 to skip the PostgreSQL variants", pytrace=False)
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shop.db'}"
        return
    admin: Engine = request.getfixturevalue("postgres")
    schema = f"sqlsrc_{secrets.token_hex(5)}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    options = f"-csearch_path={schema} -ctimezone={SESSION_TIME_ZONE}"
    yield make_url(admin.url).update_query_dict({"options": options}).render_as_string(
        hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def make_shop(db_url: str) -> Callable[..., tuple[FakeDatabase, Shop]]:
    """Writes a generated shop into the test's database."""

    def _make(seed: int = 3, **sizes: int) -> tuple[FakeDatabase, Shop]:
        shop = generate(seed, **{"orders": 60, "customers": 12, "products": 8, **sizes})
        database = FakeDatabase(db_url, TIMEZONE)
        database.write(shop)
        return database, shop

    return _make


@pytest.fixture
def connect(db_url: str) -> Callable[..., SqlConnector]:
    """A connector on the test's database, with the fake shop's streams unless given."""

    def _connect(streams: dict | None = None, **options: object) -> SqlConnector:
        return SqlConnector(SqlConfig(url=db_url, streams=streams or STREAMS,
                                      **{"timezone": TIMEZONE, **options}))

    return _connect
