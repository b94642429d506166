"""--data FILE keeps a sandbox's state across restarts."""

from __future__ import annotations

import asyncio
import functools
import sqlite3

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from connectors.marketing.samples import sample_item
from sandbox.marketing.app import create_app
from sandbox.marketing.settings import DEFAULT_KEY, SandboxSettings


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


def test_a_write_is_on_disk_before_its_answer_leaves(tmp_path):
    """A sandbox killed the moment a client saw its write accepted still has the write when it
    starts again: the request's changes are committed before its answer is sent, not after."""
    data = tmp_path / "sandbox.sqlite"
    app = create_app(SandboxSettings(data=data, visibility_delay=0))
    on_disk_when_answered: list[bool] = []

    async def watching(scope: Scope, receive: Receive, send: Send) -> None:
        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start" and scope["path"] == "/v1/customers":
                with sqlite3.connect(data) as other:  # what a restarted process would read
                    rows = other.execute("SELECT doc FROM docs").fetchall()
                on_disk_when_answered.append(any(b"c-1001" in doc for (doc,) in rows))
            await send(message)
        await app(scope, receive, answer)

    async def write() -> int:
        transport = httpx.ASGITransport(app=watching)
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox/v1",
                                     headers={"spm-api-key": DEFAULT_KEY}) as client:
            response = await client.post("/customers", json=[sample_item("customers")])
            return response.status_code

    assert asyncio.run(write()) == 200
    assert on_disk_when_answered == [True]
