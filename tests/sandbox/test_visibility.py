"""Writes are accepted at once and become readable only after the visibility delay. The
sandbox's clock stands still here (``--manual-clock``): each test moves it past the delay."""

from __future__ import annotations

import httpx
import pytest

from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY
from tests.support import new_key

DELAY = 60  # seconds, on the sandbox's clock


@pytest.fixture(scope="module")
def running(start_for_module):
    return start_for_module("--visibility-delay", str(DELAY), "--manual-clock")


@pytest.fixture(scope="module")
def slow(running):
    return running.client()


def test_a_write_is_not_readable_before_the_delay_and_is_after(running, slow):
    assert slow.post("/orders-carriers", json=[sample_item("carriers")]).json()["sent_count"] == 1

    assert slow.get("/orders-carriers").json()["data"] == []
    running.advance_clock(DELAY - 1)
    assert slow.get("/orders-carriers").json()["data"] == []
    running.advance_clock(1)
    assert len(slow.get("/orders-carriers").json()["data"]) == 1


def test_a_delete_also_takes_effect_after_the_delay(running, slow):
    slow.post("/products-manufacturers", json=[sample_item("manufacturers")])
    running.advance_clock(DELAY)
    assert len(slow.get("/products-manufacturers").json()["data"]) == 1

    slow.post("/products-manufacturers/bulk-delete", json={"manufacturer_ids": ["m1"]})

    assert len(slow.get("/products-manufacturers").json()["data"]) == 1
    running.advance_clock(DELAY)
    assert slow.get("/products-manufacturers").json()["data"] == []


def test_writes_apply_in_the_order_they_were_accepted(running, slow):
    slow.post("/orders-carriers", json=[sample_item("carriers", carrier_id="k9", name="first")])
    slow.post("/orders-carriers", json=[sample_item("carriers", carrier_id="k9", name="second")])
    running.advance_clock(DELAY)
    rows = slow.get("/orders-carriers", params={"filters[0][field]": "carrier_id",
                                                "filters[0][operator]": "EQUALS",
                                                "filters[0][value]": "k9"}).json()["data"]
    assert [r["name"] for r in rows] == ["second"]


def test_only_a_sandbox_started_with_a_manual_clock_has_a_clock_to_move(running, sandbox):
    described = httpx.get(running.root + "/openapi.json").json()["paths"]
    assert described["/_sandbox/clock"]["post"]["tags"] == ["sandbox"]
    backwards = httpx.post(running.root + "/_sandbox/clock", json={"advance": -1},
                           headers={"spm-api-key": DEFAULT_KEY})
    assert backwards.status_code == 400

    assert "/_sandbox/clock" not in httpx.get(sandbox.root + "/openapi.json").json()["paths"]
    assert httpx.post(sandbox.root + "/_sandbox/clock", json={"advance": 1},
                      headers={"spm-api-key": new_key()}).status_code == 404
