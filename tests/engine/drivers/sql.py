"""A generated shop database (SQLite, or any URL) behind a configured source, for the
engine's end-to-end suite and ``test_sync_sql.py``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, delete

from connectors.sources.sql import SqlConfig, SqlConnector
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.columns import SqlMapping
from sandbox.shops.sql.config import STREAMS, TIMEZONE, connection
from sandbox.shops.sql.data import generate
from sandbox.shops.sql.db import TABLES, FakeDatabase
from tests.engine.drivers.base import ORDER_FIELDS, ROUTES, Changed, Deleted, Driver
from tests.engine.support import EngineSetup, MakeSetup, mapped_items, read_records


@dataclass
class Setup(EngineSetup):
    database: FakeDatabase


def make_setup(make: MakeSetup, url: str, *, url_env: str | None = None,
               streams: tuple[str, ...] | None = None,
               tuning: dict[str, Any] | None = None, page_size: int | None = None) -> Setup:
    """A generated database at ``url`` (given to the source in the environment variable
    ``url_env`` when it holds a password; only ``streams`` defined when given; the source's
    ``tuning`` and rows a page when given) and a fresh shop of the sandbox."""
    database = FakeDatabase(url, TIMEZONE)
    database.write(generate(5, orders=80, customers=25, products=12))
    env: dict[str, str] = {}
    where = connection(url)
    if streams is not None:
        where = {**where, "streams": {s: STREAMS[s] for s in streams}}
    if page_size is not None:
        where = {**where, "options": {**where["options"], "page_size": page_size}}
    if url_env:
        where, env[url_env] = {**where, "url": None, "url_env": url_env}, url
    return make(Setup, {"name": Sql.source, "platform": "sql", "connection": where,
                        **({"tuning": tuning} if tuning else {})},
                env=env, database=database)


def expected_items(database: FakeDatabase, stream: str) -> dict[str, dict[str, Any]]:
    """What the database's rows become, read and mapped outside the engine: key -> item."""
    return Sql.mapped(database, stream).get(stream, {})


class Sql(Driver):
    platform = "sql"
    source = "db"
    #: every resource is its own stream (a query over the shop's tables)
    compared = {resource: resource for resource in ROUTES if resource not in ("orders", "carts")}
    order_fields = (*ORDER_FIELDS, "updated_at")
    not_applicable = {
        "missing_secret": "the database's URL may stand in the configuration itself: no"
                          " secret is required",
    }

    def start(self, make: MakeSetup, tmp_path: Path, **source: Any) -> Setup:
        return make_setup(make, f"sqlite:///{tmp_path / 'shop.db'}")

    @staticmethod
    def mapped(database: FakeDatabase, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        records = read_records(
            lambda: SqlConnector(SqlConfig(url=database.url, timezone=TIMEZONE, streams=STREAMS)),
            stream)
        return mapped_items(SqlMapping(), stream, records, MappingContext("", "en", "EUR", None))

    def stop(self, setup: Setup) -> None:
        """Nothing runs: a database file goes with the test's temporary folder."""

    def expected(self, setup: Setup, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
        return self.mapped(setup.database, stream)

    def change(self, setup: Setup) -> Changed:
        """Rows changed and added as the shop's own application would, change times set."""
        database = setup.database
        database.change("orders", 1010)  # a new change time alone: nothing to send
        database.change("orders", 1011, total=123.45)
        database.change("customers", 3, first_name="Renamed")
        database.insert("orders", [{"id": 5000, "number": "SO-5000", "state": "paid",
                                    "customer_id": None, "email": "new@example.org",
                                    "cart_id": 77, "currency": "EUR", "total": 10,
                                    "total_tax": 1, "shipping": 0, "shipping_tax": 0,
                                    "created_at": database.now(),
                                    "updated_at": database.now()}])
        return Changed(pushed={"orders": 2, "customers": 1}, orders_read=3, stored={"orders": {
            "1011": {"amount": 123.45}, "5000": {"customer_email": "new@example.org"}}})

    def delete(self, setup: Setup) -> list[Deleted]:
        engine = create_engine(setup.database.url)
        with engine.begin() as conn:
            conn.execute(delete(TABLES["products"]).where(TABLES["products"].c.id == 104))
        engine.dispose()
        return [Deleted("products", "104")]


DRIVER = Sql()
