"""The sync engine end to end on a drop folder only (the cases every platform passes are
test_sync_every_platform.py): a fake drop folder (CSV, JSON Lines, Parquet) → the sandbox,
over real HTTP, with a real SQLite state store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


#: in a fresh interpreter: a run of the source (its configuration as JSON, its secrets in the
#: environment), then how many records it read and whether great-expectations was imported
_FRESH_RUN = """
import asyncio, json, os, sys
from pipelines.engine.config import parse_config
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
config = parse_config(json.loads(sys.argv[1]))
state = StateStore(config.state_url)
reports = asyncio.run(SourceRunner(config, config.sources[0], state, os.environ).run())
state.close()
print(sum(r.records for r in reports), "great_expectations" in sys.modules)
"""


def test_a_run_that_finds_nothing_changed_never_imports_great_expectations(
        setup: Setup, tmp_path: Path) -> None:
    """The quality suites (seconds of CPU to import) start planning when a chunk first has
    items to check: an unchanged rerun is over before it would have begun."""
    setup.run()
    config = json.dumps({**setup.config.model_dump(mode="json", exclude_unset=True),
                         "state_url": f"sqlite:///{tmp_path / 'state.db'}"})  # the setup's

    def fresh_run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", _FRESH_RUN, config],
                              env={**os.environ, **setup.env}, capture_output=True, text=True,
                              timeout=120, cwd=Path(__file__).resolve().parents[2])
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert fresh_run() == ["0", "False"]
    changed = DRIVER.change(setup)
    assert fresh_run() == [str(changed.orders_read), "True"]
