"""The sync engine end to end on a shop database only (the cases every platform passes are
test_sync_every_platform.py): a fake shop database (SQLite; PostgreSQL once) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import pytest
from sqlalchemy import text

from assets.metadata import metadata_of
from connectors.sources.base import Position
from pipelines.engine.plan import KeyCheckpoint, key_checkpoint
from pipelines.engine.state import ItemStatus
from pipelines.engine.stopped import resume_text
from pipelines.engine.stream_report import StreamReport
from tests.engine.drivers.base import ROUTES, FirstSync
from tests.engine.drivers.sql import DRIVER, Setup, Sql, expected_items, make_setup
from tests.engine.support import assert_stored_as_mapped
from tests.support import shopsync_here

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


def test_a_first_sync_reads_by_key_and_a_crash_resumes_after_the_last_key_recorded(
    engine_setup, tmp_path
):
    setup = make_setup(engine_setup, f"sqlite:///{tmp_path / 'shop.db'}", streams=("orders",),
                       tuning={"chunk_items": 15}, page_size=10)
    chunks = 0

    def crash_after_two_chunks(report: Any) -> None:
        nonlocal chunks
        chunks += 1
        if chunks == 2:
            raise RuntimeError("injected crash")

    with pytest.raises(RuntimeError, match="injected crash"):
        asyncio.run(setup.runner().run(progress=crash_after_two_chunks))

    expected = expected_items(setup.database, "orders")
    with setup.database.begin() as conn:  # every order, the ones held back too
        keys = conn.execute(text("SELECT id FROM orders")).scalars()
        in_key_order = sorted((str(k) for k in keys), key=int)
    recorded = sorted((e.key for e in setup.state.entries(SOURCE, "orders")), key=int)
    # the first chunks of the keys in their order, and the last of them kept to resume after
    assert recorded == in_key_order[:len(recorded)] and 0 < len(recorded) < len(in_key_order)
    checkpoint = setup.state.get_cursor(SOURCE, key_checkpoint("orders"))
    assert checkpoint is not None and checkpoint.record_id == recorded[-1]
    assert setup.state.get_cursor(SOURCE, "orders") is None
    # what a stopped sync's message, the status and the asset's metadata say of it
    resume = setup.runner().resume_points()["orders"]
    assert resume == KeyCheckpoint(checkpoint)
    assert f"first read in key order, after #{recorded[-1]}" in resume_text({"orders": resume})
    config = tmp_path / "shops.json"  # JSON is YAML
    config.write_text(json.dumps({**setup.config.model_dump(mode="json"),
                                  "state_url": setup.state.url}))
    status = shopsync_here("status", "--json", env={**setup.env, "SHOPSYNC_CONFIG": str(config)})
    standing = json.loads(status.stdout)[SOURCE]
    assert standing["cursors"]["orders"] == standing["positions"]["orders"] == str(resume)
    shown = metadata_of(StreamReport(SOURCE, "orders"), "orders", setup.state,
                        setup.config.sources[0], None)["cursor (stored)"]
    assert shown.value == f"none yet: the {resume}"

    (rerun,) = setup.run()

    assert {o["order_id"] for o in setup.listed(ROUTES["orders"])} == set(expected)
    # the rerun read on after the checkpoint: it sent what was not recorded, and nothing
    # that was (the chunk in flight at the crash, pushed but not recorded, is sent again)
    assert rerun.records == len(in_key_order) - len(recorded)
    assert rerun.counts["orders"]["pushed"] == len(set(expected) - set(recorded))
    # read to its end: on by change time, from the newest order read (up to the moment the
    # first read read up to)
    cursor = setup.state.get_cursor(SOURCE, "orders")
    assert cursor is not None and cursor <= Position(checkpoint.changed_at)
    assert setup.state.get_cursor(SOURCE, key_checkpoint("orders")) is None
    assert sum(r.total("pushed") for r in setup.run()) == 0


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
