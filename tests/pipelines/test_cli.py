"""The shopsync command line, as an operator uses it: real servers, a config file, env vars."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sandbox.shops.woocommerce.launch import attach, launch
from tests.support import shopsync_here


@pytest.fixture(scope="module")
def shop():
    running = attach(launch("--orders", "40", "--customers", "10", "--products", "6"))
    yield running
    running.stop()


@pytest.fixture
def operator(sandbox, shop, tmp_path, fresh_key):
    config = tmp_path / "shops.yaml"
    config.write_text(f"""
destination: {{base_url: "{sandbox.base_url}", api_key_env: CLI_API_KEY}}
state_url: sqlite:///{tmp_path / 'state.db'}
sources:
  - name: woo
    platform: woocommerce
    connection: {{url: "{shop.root}", key_env: CLI_WC_KEY, secret_env: CLI_WC_SECRET}}
    lookback_seconds: 0
""")
    env = {**os.environ, "SHOPSYNC_CONFIG": str(config), "CLI_API_KEY": fresh_key(),
           "CLI_WC_KEY": shop.key, "CLI_WC_SECRET": shop.secret}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], env=env,
                              capture_output=True, check=False, text=True, timeout=120)

    def here(*args: str) -> subprocess.CompletedProcess[str]:
        """The same command in this process, for the steps a test arranges with or reads
        back: one real process per test is enough to show the process's own behaviour."""
        return shopsync_here(*args, env=env)

    run.env = env  # type: ignore[attr-defined]
    run.here = here  # type: ignore[attr-defined]
    return run


def test_check_config_tries_every_connection(operator):
    done = operator("check-config")
    assert done.returncode == 0, done.stderr
    assert "ok    destination" in done.stdout
    assert "ok    source woo" in done.stdout


def test_check_config_fails_on_refused_credentials_without_a_traceback(operator):
    operator.env["CLI_WC_SECRET"] = "cs_wrong"
    done = operator("check-config")
    assert done.returncode == 1
    assert "FAIL  source woo" in done.stderr
    assert "Consumer secret is invalid" in done.stderr
    assert "Traceback" not in done.stderr
    assert "cs_wrong" not in done.stderr + done.stdout


def test_dry_run_then_sync_then_status(operator):
    dry = json.loads(operator.here("sync", "--dry-run", "--json").stdout)
    orders = next(r for r in dry if r["stream"] == "orders")
    assert orders["counts"]["orders"]["pushed"] > 0
    assert orders["samples"]["orders"][0]["order_id"]

    done = operator("sync")
    assert done.returncode == 0, done.stderr
    assert "woo/orders/orders" in done.stdout
    assert "records read" in done.stderr  # progress

    status = json.loads(operator.here("status", "--json").stdout)["woo"]
    assert status["cursors"]["orders"] is not None
    accepted = status["items"]["orders"]["accepted"]
    assert accepted == orders["counts"]["orders"]["pushed"]


def test_backfill_rereads_a_window(operator):
    assert operator.here("sync").returncode == 0
    done = operator("backfill", "--source", "woo", "--resource", "orders",
                    "--start", "2000-01-01", "--end", "2100-01-01", "--json")
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert report["counts"]["orders"]["pushed"] > 0
    assert "unchanged" not in report["counts"]["orders"]


def test_backfill_names_an_unknown_resource(operator):
    done = operator("backfill", "--source", "woo", "--resource", "widgets",
                    "--start", "2024-01-01", "--end", "2024-01-02")
    assert done.returncode == 2
    assert "--resource widgets: not synced for woo" in done.stderr
