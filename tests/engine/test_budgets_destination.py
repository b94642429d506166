"""A destination key's request budget shared by two real processes: two ``shopsync sync``
runs of two sources, each reading its own fake shop, write with one key into one sandbox
shop, paced by the same ``destination.requests_per_second`` through the state database
(SQLite or PostgreSQL), started at once (``budget_sync.py``: both wait at a barrier once
their imports are done). What the sandbox saw (``GET /_sandbox/arrivals``) is checked
against the budget's arithmetic, as ``test_budgets_processes.py`` checks a shop's, not
against the machine's speed (``budget_support``). And nothing is lost on the way: the destination accepted every item the
ledgers of both sources say it accepted, and the ledgers hold every order of both shops.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from pipelines.engine.budgets import destination_pacer
from pipelines.engine.config import Config, parse_config
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.budget_support import assert_within_budget, first_slot_at
from tests.support import RunningSandbox, new_key, released_together

ROOT = Path(__file__).parents[2]
#: low enough that each sync alone sends faster, even on a busy machine (mapping and
#: checking a chunk of 5 items takes well under 200 ms): two pacing only themselves break it
RATE = 5.0
#: how far after the barrier opens the budget's first free slot is set: about what a
#: process takes from the barrier to its first request (config, state, lease, data
#: source, one page read: 0.25 s quiet, imports and GX's plans being done before the
#: barrier), so that both are pacing by then (a slower start only loosens the check)
HEAD_START = 0.5
#: a bound far above the time the syncs take, so only a hang fails
BOUND = 180.0
SOURCES = ("woo_a", "woo_b")


@pytest.fixture
def shops() -> Iterator[dict[str, RunningFakeShop]]:
    running = {name: start_in_thread("--orders", "50", "--customers", "12", "--products", "6",
                                     "--seed", str(seed))
               for seed, name in enumerate(SOURCES, start=7)}
    yield running
    for shop in running.values():
        shop.stop()


def write_config(path: Path, sandbox: RunningSandbox,
                 shops: dict[str, RunningFakeShop]) -> Config:
    raw = {
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_API_KEY",
                        "requests_per_second": RATE},
        "state_url_env": "T_STATE_URL",
        "sources": [{
            "name": name, "platform": "woocommerce", "lookback_seconds": 0,
            "connection": {"url": shop.root, "key_env": f"T_WC_KEY_{name.upper()}",
                           "secret_env": f"T_WC_SECRET_{name.upper()}"},
            "data_source": {"label": name},
            "tuning": {"page_size": 10, "chunk_items": 5},
        } for name, shop in shops.items()],
    }
    path.write_text(yaml.safe_dump(raw))
    return parse_config(raw)


def orders_at(shop: RunningFakeShop) -> int:
    api = shop.client()
    return sum(int(api.get("/orders", params={"per_page": 1, "status": status})
                   .headers["X-WP-Total"]) for status in ("any", "trash"))


def test_two_syncs_writing_with_one_key_stay_within_its_budget_together(
    db_url: str, sandbox: RunningSandbox, shops: dict[str, RunningFakeShop], tmp_path: Path
) -> None:
    config_path = tmp_path / "shops.yaml"
    config = write_config(config_path, sandbox, shops)
    key = new_key()
    env = {**os.environ, "SHOPSYNC_CONFIG": str(config_path), "T_API_KEY": key,
           "T_STATE_URL": db_url, "PYTHONFAULTHANDLER": "1"}
    for name, shop in shops.items():
        env |= {f"T_WC_KEY_{name.upper()}": shop.key, f"T_WC_SECRET_{name.upper()}": shop.secret}
    budget = destination_pacer(None, config.destination)  # type: ignore[arg-type]
    assert budget is not None

    slots: list[float] = []
    codes, outputs, _ = released_together(
        [[sys.executable, "-m", "tests.engine.budget_sync", name] for name in SOURCES],
        tmp_path, env=env, cwd=ROOT, bound=BOUND,
        before_release=lambda: slots.append(first_slot_at(db_url, budget.budget, RATE,
                                                          HEAD_START)))
    (t0,) = slots
    assert codes == [0, 0], outputs

    with httpx.Client(headers={"spm-api-key": key}) as api:
        arrivals = api.get(sandbox.root + "/_sandbox/arrivals").json()["data"]["at"]
        writes = api.get(sandbox.root + "/_sandbox/stats").json()["data"]["writes"]
    assert_within_budget(arrivals, t0, RATE)

    accepted = ItemStatus.ACCEPTED.value
    ledger: Counter[str] = Counter()
    with StateStore(db_url) as state:
        for name, shop in shops.items():
            counts = state.counts(name)
            # each source's ledger holds each order of its shop (sent, or quarantined) …
            assert sum(counts["orders"].values()) == orders_at(shop), name
            ledger.update({r: c.get(accepted, 0) for r, c in counts.items()})
    # … and the destination accepted what both ledgers say was accepted, nothing less
    assert {r: w["accepted"] for r, w in writes.items()} == {
        r: n for r, n in ledger.items() if n}
