"""The sync engine end to end: a fake shop database (SQLite; PostgreSQL once) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import create_engine, delete, text

from connectors.sources.sql import SqlConfig, SqlConnector
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.mappings.columns import SqlMapping
from pipelines.engine.state import ItemStatus
from sandbox.shops.sql.config import STREAMS, TIMEZONE, connection
from sandbox.shops.sql.data import generate
from sandbox.shops.sql.db import TABLES, FakeDatabase
from tests.engine.support import (
    EngineSetup,
    EveryPlatform,
    MakeSetup,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
)

SOURCE = "db"
#: resource -> its listing route in the sandbox
ROUTES = {"statuses": "/orders-statuses", "carriers": "/orders-carriers",
          "groups": "/customers-groups", "categories": "/products-categories",
          "manufacturers": "/products-manufacturers", "customers": "/customers",
          "products": "/products", "vouchers": "/vouchers"}


@dataclass
class Setup(EngineSetup):
    database: FakeDatabase


def make_setup(engine_setup: MakeSetup, url: str, *, url_env: str | None = None,
               streams: tuple[str, ...] | None = None) -> Setup:
    """A generated database at ``url`` (given to the source in the environment variable
    ``url_env`` when it holds a password; only ``streams`` defined when given) and a fresh
    shop of the sandbox."""
    database = FakeDatabase(url, TIMEZONE)
    database.write(generate(5, orders=80, customers=25, products=12))
    env: dict[str, str] = {}
    where = connection(url)
    if streams is not None:
        where = {**where, "streams": {s: STREAMS[s] for s in streams}}
    if url_env:
        where, env[url_env] = {**where, "url": None, "url_env": url_env}, url
    return engine_setup(Setup, {"name": SOURCE, "platform": "sql", "connection": where},
                        env=env, database=database)


@pytest.fixture
def setup(engine_setup, tmp_path) -> Setup:
    return make_setup(engine_setup, f"sqlite:///{tmp_path / 'shop.db'}")


def expected_items(database: FakeDatabase, stream: str) -> dict[str, dict[str, Any]]:
    """What the database's rows become, read and mapped outside the engine: key -> item."""
    records = read_records(
        lambda: SqlConnector(SqlConfig(url=database.url, timezone=TIMEZONE, streams=STREAMS)),
        stream)
    return mapped_items(SqlMapping(), stream, records,
                        MappingContext("", "en", "EUR", None)).get(stream, {})


def assert_stored_equal_mapped(setup: Setup, resource: str) -> None:
    assert_stored_as_mapped(setup.stored(resource, ROUTES[resource]),
                            expected_items(setup.database, resource), resource)


def test_a_full_sync_leaves_the_destination_equal_to_the_mapped_source(setup):
    reports = setup.run()

    for resource in ROUTES:
        assert_stored_equal_mapped(setup, resource)
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    expected = expected_items(setup.database, "orders")
    assert set(orders) == set(expected)
    for order_id, item in expected.items():
        for field in ("amount", "amount_without_tax", "status_id", "reference", "currency",
                      "shipping_costs", "is_confirmed", "created_at", "updated_at"):
            assert orders[order_id][field] == item[field], (order_id, field)
        assert orders[order_id]["customer_email"] == item["customer"]["email"]
    quarantined = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    reasons = {reason for entry in quarantined for reason in entry.errors}
    assert "customer.email: 'not-an-email' is not a well-formed email address" in reasons
    assert "products[0].price: Input should be greater than or equal to 0" in reasons
    by_stream = {r.stream: r for r in reports}
    assert by_stream["orders"].counts["orders"]["quarantined"] == len(quarantined)
    assert by_stream["carts"].counts["carts"]["accepted"] > 0


class TestAsEveryPlatform(EveryPlatform):
    """A second run with no change sends nothing (tests/engine/support.py)."""


def test_the_next_run_sends_only_what_changed(setup):
    setup.run()
    database = setup.database
    database.change("orders", 1010)  # a new change time alone: nothing to send
    database.change("orders", 1011, total=123.45)
    database.change("customers", 3, first_name="Renamed")
    database.insert("orders", [{"id": 5000, "number": "SO-5000", "state": "paid",
                                "customer_id": None, "email": "new@example.org",
                                "cart_id": 77, "currency": "EUR", "total": 10, "total_tax": 1,
                                "shipping": 0, "shipping_tax": 0, "created_at": database.now(),
                                "updated_at": database.now()}])

    again = setup.run_by_stream()

    assert again["orders"].records == 3
    assert again["orders"].counts["orders"]["pushed"] == 2
    assert again["customers"].counts["customers"]["pushed"] == 1
    assert sum(r.total("pushed") for r in again.values()) == 3
    stored = {o["order_id"]: o for o in setup.listed("/orders")}
    assert stored["1011"]["amount"] == 123.45
    assert stored["5000"]["customer_email"] == "new@example.org"


def test_resources_left_out_syncs_exactly_the_resources_of_the_defined_streams(
    engine_setup, tmp_path
):
    setup = make_setup(engine_setup, f"sqlite:///{tmp_path / 'shop.db'}",
                       streams=("products", "customers"))
    assert setup.config.sources[0].resources == ["all"]

    reports = setup.run()

    assert [r.stream for r in reports] == ["customers", "products"]
    for resource in ("customers", "products"):
        assert_stored_equal_mapped(setup, resource)
    assert set(setup.stats()["writes"]) == {"customers", "products"}
    for resource, route in ROUTES.items():
        if resource not in ("customers", "products"):
            assert setup.listed(route) == [], resource
    assert setup.listed("/orders") == []


def test_a_row_deleted_at_the_source_is_deleted_at_the_destination(setup):
    setup.run()
    engine = create_engine(setup.database.url)
    with engine.begin() as conn:
        conn.execute(delete(TABLES["products"]).where(TABLES["products"].c.id == 104))
    engine.dispose()

    report = asyncio.run(setup.runner().reconcile(deadline_seconds=0))

    assert report.resources["products"].deleted == 1
    assert "104" not in {str(p["product_id"]) for p in setup.listed("/products")}
    assert setup.state.counts(SOURCE)["products"]["deleted"] == 1


def test_a_full_sync_from_postgresql(engine_setup, postgres_admin):
    schema = f"sync_{secrets.token_hex(5)}"
    with postgres_admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        schema_url = postgres_admin.url.update_query_dict(
            {"options": f"-csearch_path={schema} -ctimezone=America/Santiago"})
        setup = make_setup(engine_setup, schema_url.render_as_string(hide_password=False),
                           url_env="T_DB_URL")
        setup.run()
        for resource in ("customers", "products", "vouchers"):
            assert_stored_equal_mapped(setup, resource)
        assert len(setup.listed("/orders")) == len(expected_items(setup.database, "orders"))
        assert sum(r.total("pushed") for r in setup.run()) == 0
    finally:
        with postgres_admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
