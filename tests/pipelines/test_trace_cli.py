"""``shopsync trace``: one item's story by its id, as an operator asks for it after a sync and
a reconciliation; and how ``shopsync reconcile`` shows the visibility lag apart from the time
to confirmation.

The commands run in this process (click's runner, with the environment they would get):
tests/pipelines/test_cli.py runs the command line as its own process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.support import shopsync_here

CONFIG = """
destination: {{base_url: "{base}", api_key_env: TC_API_KEY}}
state_url: sqlite:///{state}
sources:
  - name: woo
    platform: woocommerce
    connection: {{url: "{shop}", key_env: TC_WC_KEY, secret_env: TC_WC_SECRET}}
    resources: [customers, products]
    lookback_seconds: 0
"""


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "0", "--customers", "6", "--products", "3")
    yield running
    running.stop()


@pytest.fixture
def operator(sandbox, shop, tmp_path, fresh_key):
    path = tmp_path / "shops.yaml"
    path.write_text(CONFIG.format(base=sandbox.base_url, state=tmp_path / "state.db",
                                  shop=shop.root))
    env = {"SHOPSYNC_CONFIG": str(path), "TC_API_KEY": fresh_key(),
           "TC_WC_KEY": shop.key, "TC_WC_SECRET": shop.secret}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return shopsync_here(*args, env=env)

    run.state_url = f"sqlite:///{tmp_path / 'state.db'}"  # type: ignore[attr-defined]
    return run


def visible_keys(operator, resource: str) -> list[str]:
    """The keys of the items of ``resource`` the ledger holds as visible."""
    with StateStore(operator.state_url) as state:
        return [e.key for e in state.entries("woo", resource, {ItemStatus.VISIBLE})]


def test_a_product_is_traced_by_its_source_id_from_its_read_to_its_confirmation(operator):
    assert operator("sync").returncode == 0
    reconciled = operator("reconcile")
    keys = visible_keys(operator, "products")
    record = keys[0].split("|")[0]  # the product's id in the shop; its item is "<id>|en"

    done = operator("trace", "--source", "woo", "--resource", "products", record)

    assert done.returncode == 0, done.stderr
    heading, sent, confirmed = done.stdout.splitlines()
    assert heading == f"woo/products {keys[0]}: visible now (source record {record})"
    assert " sync #" in sent and sent.endswith("; sent: accepted by the API")
    assert f"read from the source (record {record}, changed there " in sent
    assert " reconcile #" in confirmed
    assert "confirmed visible by reconciliation: first seen " in confirmed
    assert ", visibility lag ≤ " in confirmed and ", time to confirmation " in confirmed
    products = next(line for line in reconciled.stdout.splitlines()
                    if line.strip().startswith("products"))
    assert "(resolution " in products  # the lag, as a bound with its resolution


def test_a_quarantined_customer_is_traced_by_its_key_as_json(operator):
    operator("sync")
    (held,) = json.loads(operator("rejections", "list", "--state", "quarantined",
                                  "--resource", "customers", "--json").stdout)

    done = operator("trace", "--source", "woo", "--resource", "customers", held["keys"][0],
                    "--json")

    assert done.returncode == 0, done.stderr
    (story,) = json.loads(done.stdout)
    assert (story["key"], story["status"]) == (held["keys"][0], "quarantined")
    (event,) = story["events"]
    assert event["kind"] == "quarantined" and event["run_kind"] == "sync"
    assert event["errors"] == [held["error"]]
    assert event["summary"].endswith(f"held back, never sent (quarantined): {held['error']}")


def test_an_unknown_id_is_said_in_one_line_and_exits_1(operator):
    operator("sync")

    done = operator("trace", "--source", "woo", "--resource", "products", "424242")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == ("no item '424242' in woo/products: neither an item key nor a source"
                           " record id the ledger knows\n")

