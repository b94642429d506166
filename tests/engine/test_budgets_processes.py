"""A shop's request budget shared by two real processes: each reads every stream of its own
source of one fake shop (``budget_reader.py``: the connector a sync opens, paced by the
same ``requests_per_second`` through the state database, SQLite or PostgreSQL), started at
once. What the shop saw (``/__fake__/arrivals``) is checked against the budget's
arithmetic, not against the machine's speed (``budget_support``): two processes pacing only
themselves would break it as soon as both are up, and all along, since each alone can read
faster than the budget.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pipelines.engine.budgets import shop_pacer
from pipelines.engine.config import parse_config
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.budget_support import assert_within_budget, first_slot_at
from tests.support import RunningSandbox, new_key

ROOT = Path(__file__).parents[2]
RATE = 20.0
#: how far ahead of the processes' start the budget's first free slot is set: about what
#: two processes take to start and reach the shop, so that both are pacing by then (a
#: slower start only loosens the check, it cannot fail it)
HEAD_START = 2.0


@pytest.fixture
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "24", "--customers", "12", "--products", "6",
                              "--seed", "3")
    yield running
    running.stop()


def write_config(path: Path, sandbox: RunningSandbox, shop: RunningFakeShop,
                 state_url: str) -> dict[str, object]:
    raw = {
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_API_KEY"},
        "state_url_env": "T_STATE_URL",
        "sources": [{
            "name": name, "platform": "woocommerce", "lookback_seconds": 0,
            "connection": {"url": shop.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET",
                           "options": {"requests_per_second": RATE}},
            "data_source": {"label": name},
            "tuning": {"page_size": 4},
        } for name in ("woo_a", "woo_b")],
    }
    path.write_text(yaml.safe_dump(raw))
    return raw


def test_two_processes_on_one_shop_stay_within_its_budget_together(
    db_url: str, sandbox: RunningSandbox, shop: RunningFakeShop, tmp_path: Path
) -> None:
    config_path = tmp_path / "shops.yaml"
    config = parse_config(write_config(config_path, sandbox, shop, db_url))
    env = {**os.environ, "T_API_KEY": new_key(), "T_WC_KEY": shop.key,
           "T_WC_SECRET": shop.secret, "T_STATE_URL": db_url}
    budget = shop_pacer(None, config.sources[0])  # type: ignore[arg-type]
    assert budget is not None
    t0 = first_slot_at(db_url, budget.budget, RATE, HEAD_START)

    commands = [[sys.executable, "-m", "tests.engine.budget_reader", str(config_path), name]
                for name in ("woo_a", "woo_b")]
    processes = [subprocess.Popen(c, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for c in commands]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs

    assert_within_budget(shop.fake().get("/arrivals").json()["at"], t0, RATE)
