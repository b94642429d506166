"""Real databases for the SQL connector's tests: a SQLite file, and a schema of its own on
the test PostgreSQL (the ``postgres_admin`` fixture of tests/conftest.py), with a session
time zone that is not UTC, so that a zone slip shows."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from connectors.sources.sql import SqlConfig, SqlConnector
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import Shop, generate
from sandbox.shops.sql.db import FakeDatabase

SESSION_TIME_ZONE = "Asia/Kathmandu"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shop.db'}"
        return
    admin: Engine = request.getfixturevalue("postgres_admin")
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
