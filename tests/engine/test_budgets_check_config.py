"""``check-config`` tries the destination and the shop within their shared request budgets,
as a run does: with every slot before ``T0`` taken (as by runs in full flow), its requests
arrive at ``T0`` or later (``budget_support``), on SQLite and on PostgreSQL. (``status``
sends no request: it reads the state database only.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.engine.budgets import destination_pacer, shop_pacer
from pipelines.engine.config import parse_config
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.budget_support import assert_within_budget, first_slot_at
from tests.support import RunningSandbox, new_key

RATE = 20.0
#: how far ahead the budgets' first free slots are set: check-config waits that long at least
#: (a slower start only loosens the check)
HEAD_START = 2.0


@pytest.fixture
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "3", "--customers", "2", "--products", "1")
    yield running
    running.stop()


def test_check_config_waits_for_the_destinations_and_the_shops_budgets(
    db_url: str, sandbox: RunningSandbox, shop: RunningFakeShop, tmp_path: Path
) -> None:
    raw = {
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_API_KEY",
                        "requests_per_second": RATE},
        "state_url_env": "T_STATE_URL",
        "sources": [{
            "name": "woo", "platform": "woocommerce",
            "connection": {"url": shop.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET",
                           "options": {"requests_per_second": RATE}},
            "data_source": {"label": "woo"},
        }],
    }
    path = tmp_path / "shops.yaml"
    path.write_text(yaml.safe_dump(raw))
    config = parse_config(raw)
    key = new_key()
    env = {"T_API_KEY": key, "T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret,
           "T_STATE_URL": db_url}
    destination = destination_pacer(None, config.destination)  # type: ignore[arg-type]
    shops = shop_pacer(None, config.sources[0])  # type: ignore[arg-type]
    assert destination is not None and shops is not None
    destination_t0 = first_slot_at(db_url, destination.budget, RATE, HEAD_START)
    shop_t0 = first_slot_at(db_url, shops.budget, RATE, HEAD_START)

    result = CliRunner().invoke(main, ["check-config", "--config", str(path)], env=env)

    assert result.exit_code == 0, result.output
    arrivals = httpx.get(sandbox.root + "/_sandbox/arrivals",
                         headers={"spm-api-key": key}).json()["data"]["at"]
    assert_within_budget(arrivals, destination_t0, RATE, at_least=1)
    assert_within_budget(shop.fake().get("/arrivals").json()["at"], shop_t0, RATE, at_least=1)
