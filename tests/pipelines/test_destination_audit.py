"""The destination is the truth, at the command line: `reconcile --audit` finds what the
destination lost and restores it, `status` shows what the last audit found, `resync` sends
everything again, and `reconcile` finishes with an exit code that says how it went.

The commands run in this process (click's runner, with the environment they would get);
tests/pipelines/test_cli.py runs the command line as its own process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from connectors.sources.woocommerce import WooCommerceConnector
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.support import assert_stored_as_mapped, mapped_items, read_records, row_key
from tests.support import RunningSandbox, shopsync_here

CONFIG = """
destination: {{base_url: "{base}", api_key_env: AU_API_KEY}}
state_url: sqlite:///{state}
reconciliation: {{deadline_seconds: {deadline}, max_resends: {resends}}}
sources:
  - name: woo
    platform: woocommerce
    connection: {{url: "{shop}", key_env: AU_WC_KEY, secret_env: AU_WC_SECRET}}
    lookback_seconds: 0
"""
KEY = "sandbox1.shopsync-local-key"


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "40", "--customers", "12", "--products", "6",
                              "--seed", "3")
    yield running
    running.stop()


class Operator:
    """A person at the command line, with a shops.yaml pointing at ``sandbox``."""

    def __init__(self, shop: RunningFakeShop, tmp_path: Path) -> None:
        self.shop, self.tmp_path = shop, tmp_path
        self.path = tmp_path / "shops.yaml"
        self.env = {"SHOPSYNC_CONFIG": str(self.path), "AU_API_KEY": KEY,
                    "AU_WC_KEY": shop.key, "AU_WC_SECRET": shop.secret}

    def configure(self, sandbox: RunningSandbox, deadline: float = 600, resends: int = 3) -> None:
        self.sandbox = sandbox
        self.path.write_text(CONFIG.format(base=sandbox.base_url, state=self.tmp_path / "s.db",
                                           shop=self.shop.root, deadline=deadline,
                                           resends=resends))

    def __call__(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return shopsync_here(*args, env={**self.env, **env})

    def json(self, *args: str) -> Any:
        done = self(*args, "--json")
        assert done.stdout, done.stderr
        return json.loads(done.stdout)

    def visible(self) -> dict[str, int]:
        items = self.json("status")["woo"]["items"]
        return {r: c["visible"] for r, c in items.items() if c.get("visible")}

    def stored(self, resource: str, route: str) -> dict[str, dict[str, Any]]:
        rows = self.sandbox.client(KEY).get(route, params={"limit": 1000}).json()["data"]
        return {row_key(resource, row): row for row in rows}

    def expected(self, stream: str, resource: str) -> dict[str, dict[str, Any]]:
        records = read_records(
            lambda: WooCommerceConnector(self.shop.root, self.shop.key, self.shop.secret), stream)
        return mapped_items(mapping_for("woocommerce"), stream, records,
                            MappingContext(self.shop.root, "en", "EUR", None))[resource]


@pytest.fixture
def operator(shop: RunningFakeShop, tmp_path: Path) -> Operator:
    return Operator(shop, tmp_path)


def test_destination_data_lost_after_a_sync_is_shown_by_status_and_restored_by_an_audit(
    start: Callable[..., RunningSandbox], operator: Operator
):
    operator.configure(start("--visibility-delay", "0"))
    operator("sync")
    operator("reconcile")
    visible = operator.visible()
    # the destination loses everything (restarted in memory: as after a restore from an old
    # backup, or an account reset); the ledger still holds every item as visible
    operator.sandbox.stop()
    operator.configure(start("--visibility-delay", "0"))
    assert operator.visible() == visible

    done = operator("reconcile", "--audit", "--json")
    status = operator.json("status")["woo"]
    shown = operator("status").stdout

    report = json.loads(done.stdout)["woo"]
    audited = report["audit"]
    assert {r: a["checked"] for r, a in audited.items() if a["checked"]} == visible
    assert {r: a["missing"] for r, a in audited.items() if a["missing"]} == visible
    assert {r: a["resent"] for r, a in audited.items() if a["resent"]} == visible
    assert {r: a["missing"] for r, a in status["audits"].items() if a["missing"]} == visible
    assert "**Last audit**" in shown and "| orders |" in shown
    assert report["not_checked"] == []
    # what remains is what the shop itself holds back (a bad email, a negative price)
    assert done.returncode == 1 and all("held back" in gap for gap in report["gaps"])
    assert operator.visible() == visible
    for resource, route, stream in [("customers", "/customers", "customers"),
                                    ("products", "/products", "products"),
                                    ("vouchers", "/vouchers", "coupons")]:
        assert_stored_as_mapped(operator.stored(resource, route),
                                operator.expected(stream, resource), resource)
    assert set(operator.stored("orders", "/orders")) == set(operator.expected("orders", "orders"))


def test_resync_sends_everything_again_and_keeps_the_cursors_and_status_tells_full_reads(
    start: Callable[..., RunningSandbox], operator: Operator
):
    operator.configure(start("--visibility-delay", "0"))
    operator("sync")
    before = operator.json("status")["woo"]

    done = operator("resync", "--source", "woo", "--resource", "orders", "--json")
    unknown = operator("resync", "--source", "woo", "--resource", "contacts")
    shown = operator("status").stdout

    sent = {(r["stream"], resource): counts["pushed"] for r in json.loads(done.stdout)
            for resource, counts in r["counts"].items()}
    assert done.returncode == 0
    assert sent == {("orders", "orders"): len(operator.expected("orders", "orders"))}
    assert operator.json("status")["woo"]["cursors"] == before["cursors"]
    assert unknown.returncode == 2 and "--resource contacts: not synced for woo" in unknown.stderr
    assert "(not synced yet)" not in shown
    assert "cursor customers    read in full each run, last read" in shown


def test_reconcile_takes_its_patience_from_the_config_and_exits_1_when_items_are_parked(
    start: Callable[..., RunningSandbox], operator: Operator
):
    # the API accepts every write and applies none; the config allows no wait and no re-send
    operator.configure(start("--drop-rate", "1", "--visibility-delay", "0"), deadline=0,
                       resends=0)
    operator("sync", "--stream", "statuses")

    done = operator("reconcile", "--json")

    statuses = json.loads(done.stdout)["woo"]["resources"]["statuses"]
    assert (statuses["checked"], statuses["parked"], statuses["resent"]) == (8, 8, 0)
    assert done.returncode == 1


def test_reconcile_confirms_what_it_can_and_exits_3_when_the_source_cannot_be_read(
    start: Callable[..., RunningSandbox], operator: Operator
):
    operator.configure(start("--visibility-delay", "0"))
    operator("sync", "--stream", "statuses")

    done = operator("reconcile", "--json", AU_WC_SECRET="cs_wrong")

    report = json.loads(done.stdout)["woo"]
    assert report["resources"]["statuses"]["visible"] == 8
    assert report["gaps"] == []
    assert any(line.startswith("completeness") for line in report["not_checked"])
    assert done.returncode == 3
