"""Rejections a person can work with: grouped, shown, exported, retried after a fix, and
never retried forever.

The commands run in this process (click's runner, with the environment they would get):
the subject is what they do with rejections; tests/pipelines/test_cli.py runs the command
line as its own process."""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

from sandbox.shops.woocommerce.launch import start_in_thread
from tests.support import shopsync_here

CONFIG = """
destination: {{base_url: "{base}", api_key_env: RJ_API_KEY}}
state_url: sqlite:///{state}
sources:
  - name: woo
    platform: woocommerce
    connection: {{url: "{shop}", key_env: RJ_WC_KEY, secret_env: RJ_WC_SECRET}}
    resources: [customers]
    lookback_seconds: 0
    tuning: {{max_rejected_attempts: 2}}
{mapping}
"""
BAD_MAPPING = "    mapping: {customers: {set: {id_data_source: 999}}}"


@pytest.fixture(scope="module")
def shop():
    running = start_in_thread("--orders", "0", "--customers", "6", "--products", "0")
    yield running
    running.stop()


@pytest.fixture
def operator(sandbox, shop, tmp_path, fresh_key):
    path = tmp_path / "shops.yaml"
    env = {"SHOPSYNC_CONFIG": str(path), "RJ_API_KEY": fresh_key(),
           "RJ_WC_KEY": shop.key, "RJ_WC_SECRET": shop.secret}

    def configure(mapping: str) -> None:
        path.write_text(CONFIG.format(base=sandbox.base_url, state=tmp_path / "state.db",
                                      shop=shop.root, mapping=mapping))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return shopsync_here(*args, env=env)

    run.configure = configure  # type: ignore[attr-defined]
    return run


def test_rejections_are_grouped_shown_exported_and_cleared_by_a_retry_after_the_fix(operator):
    operator.configure(BAD_MAPPING)
    operator("sync")

    listed = json.loads(operator("rejections", "list", "--json").stdout)
    assert listed[0]["error"] == "id_data_source: data source 999 does not exist in this shop"
    assert listed[0]["count"] == 5  # six customers, one quarantined for its bad email
    shown = json.loads(operator("rejections", "show", "--resource", "customers",
                                listed[0]["keys"][0]).stdout)
    assert shown["payload"]["id_data_source"] == 999
    exported = list(csv.DictReader(io.StringIO(
        operator("rejections", "export", "--state", "rejected").stdout)))
    assert len(exported) == 5 and exported[0]["errors"].startswith("id_data_source")

    operator.configure("")  # the mapping fix
    done = operator("rejections", "retry")

    assert done.returncode == 0, done.stderr
    assert "5 sent again, 5 accepted, 0 still rejected or parked" in done.stdout
    assert json.loads(operator("rejections", "list", "--state", "rejected", "--json").stdout) == []
    assert operator("rejections", "list", "--state", "parked").stdout == "no parked items\n"


def test_an_item_the_api_keeps_refusing_is_parked_after_the_allowed_attempts(operator):
    operator.configure(BAD_MAPPING)
    for _ in range(3):
        operator("sync")

    status = json.loads(operator("status", "--json").stdout)["woo"]["items"]["customers"]
    assert status == {"parked": 5, "quarantined": 1}
    listed = json.loads(operator("rejections", "list", "--json").stdout)
    assert listed[0]["statuses"] == ["parked"]


def test_quarantined_items_are_listed_shown_and_exported_with_their_reasons(operator):
    # what the reports send a person to `shopsync rejections` for: items held back before
    # sending, here the shop's customer with a malformed email
    operator.configure("")
    operator("sync")
    reason = "email: 'not-an-email' is not a well-formed email address"

    everything = json.loads(operator("rejections", "list", "--json").stdout)
    quarantined = json.loads(operator("rejections", "list", "--state", "quarantined",
                                      "--json").stdout)
    shown = json.loads(operator("rejections", "show", "--resource", "customers",
                                quarantined[0]["keys"][0]).stdout)
    exported = json.loads(operator("rejections", "export", "--state", "quarantined",
                                   "--format", "json").stdout)

    assert everything == quarantined  # nothing rejected or parked: all held back is this
    assert [(g["error"], g["count"], g["statuses"]) for g in quarantined] == [
        (reason, 1, ["quarantined"])]
    assert shown["status"] == "quarantined" and shown["errors"] == [reason]
    assert shown["payload"]["email"] == "not-an-email"
    assert [(e["key"], e["errors"]) for e in exported] == [(shown["key"], [reason])]
    assert operator("rejections", "list", "--state", "rejected").stdout == "no rejected items\n"
