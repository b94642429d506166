"""The sync engine end to end on a drop folder only (the cases every platform passes are
test_sync_every_platform.py): a fake drop folder (CSV, JSON Lines, Parquet) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import pytest

from pipelines.engine.state import ItemStatus
from tests.engine.drivers.base import FirstSync
from tests.engine.drivers.files import DRIVER, Files, Setup

SOURCE = DRIVER.source


@pytest.fixture
def driver() -> Files:
    return DRIVER


def test_every_order_row_is_read_the_broken_line_too(first_sync: FirstSync) -> None:
    assert first_sync.reports["orders"].records == len(first_sync.setup.drop.ids["orders"])


def test_rows_that_cannot_be_read_are_quarantined_under_their_file_and_line(
    first_sync: FirstSync
) -> None:
    setup = first_sync.setup
    held = {e.source_record_id: e for e in
            setup.state.entries(SOURCE, "customers", {ItemStatus.QUARANTINED})}
    broken = [i for i in setup.drop.ids["customers"] if ":" in i]

    assert set(broken) <= set(held)
    assert held[broken[0]].payload["customer_id"]["errors"] == [
        f"{broken[0]}: no key (column 'id' is empty or missing)"]
    orders = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})
    assert any(e.source_record_id.startswith("orders/orders-") for e in orders)


def test_files_already_read_are_not_read_again(setup: Setup) -> None:
    setup.run()
    accepted = setup.accepted()
    for path in setup.root.rglob("*.csv"):  # touched, not changed
        path.touch()

    again = setup.run()

    assert sum(r.records for r in again) == 0
    assert sum(r.total("pushed") for r in again) == 0
    assert setup.accepted() == accepted
