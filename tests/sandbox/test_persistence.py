"""--data FILE keeps a sandbox's state across restarts."""

from __future__ import annotations

import functools

import pytest

from connectors.marketing.samples import sample_item


@pytest.fixture
def start(start):
    """Sandboxes of their own process: the state must survive the process's end."""
    return functools.partial(start, own_process=True)


def test_state_survives_a_restart_with_the_same_data_file(start, tmp_path):
    data = str(tmp_path / "sandbox.sqlite")
    first = start("--data", data, "--visibility-delay", "0")
    client = first.client()
    client.post("/customers", json=[sample_item("customers")])
    source = client.post("/data-sources", json={"label": "POS"}).json()["data"]
    assert len(client.get("/customers").json()["data"]) == 1
    first.stop()

    again = start("--data", data, "--visibility-delay", "0").client()

    assert [c["customer_id"] for c in again.get("/customers").json()["data"]] == ["c-1001"]
    assert len(again.get("/contacts/all").json()["data"]) == 1
    labels = [d["label"] for d in again.get("/data-sources").json()["data"]]
    assert labels == ["Default", "POS"]
    second = again.post("/data-sources", json={"label": "Marketplace"}).json()["data"]
    assert second["id_data_source"] == source["id_data_source"] + 1


def test_writes_pending_at_shutdown_are_applied_after_restart(start, tmp_path):
    data = str(tmp_path / "sandbox.sqlite")
    first = start("--data", data, "--visibility-delay", "60", "--manual-clock")
    first.client().post("/orders-carriers", json=[sample_item("carriers")])
    assert first.client().get(first.root + "/_sandbox/stats").json()["data"]["pending"] == 1
    first.stop()

    again = start("--data", data, "--visibility-delay", "60", "--manual-clock")
    again.advance_clock(60)  # the restarted clock starts no earlier than the first
    rows = again.client().get("/orders-carriers").json()["data"]
    assert [c["carrier_id"] for c in rows] == ["k1"]


def test_the_data_file_does_not_hold_the_key(start, tmp_path):
    data = tmp_path / "sandbox.sqlite"
    running = start("--data", str(data), "--key", "shopAAAA.secret-in-file")
    running.client("shopAAAA.secret-in-file").post("/customers", json=[sample_item("customers")])
    running.stop()
    stored = data.read_bytes()
    assert b"c-1001" in stored
    assert b"secret-in-file" not in stored
