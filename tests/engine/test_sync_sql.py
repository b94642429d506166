"""The sync engine end to end on a shop database only (the cases every platform passes are
test_sync_every_platform.py): a fake shop database (SQLite; PostgreSQL once) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import secrets

import pytest
from sqlalchemy import text

from pipelines.engine.state import ItemStatus
from tests.engine.drivers.base import ROUTES, FirstSync
from tests.engine.drivers.sql import DRIVER, Setup, Sql, expected_items, make_setup
from tests.engine.support import assert_stored_as_mapped

SOURCE = DRIVER.source


@pytest.fixture
def driver() -> Sql:
    return DRIVER


def assert_stored_equal_mapped(setup: Setup, resource: str) -> None:
    assert_stored_as_mapped(setup.stored(resource, ROUTES[resource]),
                            expected_items(setup.database, resource), resource)


def test_a_first_sync_quarantines_negative_prices_and_sends_carts(first_sync: FirstSync) -> None:
    quarantined = first_sync.setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    reasons = {reason for entry in quarantined for reason in entry.errors}
    assert "products[0].price: Input should be greater than or equal to 0" in reasons
    assert first_sync.reports["carts"].counts["carts"]["accepted"] > 0


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
