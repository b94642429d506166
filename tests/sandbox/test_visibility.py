"""Writes are accepted at once and become readable only after the visibility delay."""

from __future__ import annotations

import time

import pytest

from connectors.marketing.samples import sample_item


@pytest.fixture(scope="module")
def slow(start_for_module):
    return start_for_module("--visibility-delay", "0.6").client()


def wait_until(check, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not visible in time"
        time.sleep(0.05)


def test_a_write_is_not_readable_before_the_delay_and_is_after(slow):
    started = time.monotonic()
    assert slow.post("/orders-carriers", json=[sample_item("carriers")]).json()["sent_count"] == 1

    assert slow.get("/orders-carriers").json()["data"] == []
    wait_until(lambda: len(slow.get("/orders-carriers").json()["data"]) == 1)
    assert time.monotonic() - started >= 0.6


def test_a_delete_also_takes_effect_after_the_delay(slow):
    slow.post("/products-manufacturers", json=[sample_item("manufacturers")])
    wait_until(lambda: len(slow.get("/products-manufacturers").json()["data"]) == 1)

    slow.post("/products-manufacturers/bulk-delete", json={"manufacturer_ids": ["m1"]})

    assert len(slow.get("/products-manufacturers").json()["data"]) == 1
    wait_until(lambda: slow.get("/products-manufacturers").json()["data"] == [])


def test_writes_apply_in_the_order_they_were_accepted(slow):
    slow.post("/orders-carriers", json=[sample_item("carriers", carrier_id="k9", name="first")])
    slow.post("/orders-carriers", json=[sample_item("carriers", carrier_id="k9", name="second")])
    wait_until(lambda: any(c["carrier_id"] == "k9" for c in
                           slow.get("/orders-carriers", params={"limit": 100}).json()["data"]))
    rows = slow.get("/orders-carriers", params={"filters[0][field]": "carrier_id",
                                                "filters[0][operator]": "EQUALS",
                                                "filters[0][value]": "k9"}).json()["data"]
    assert [r["name"] for r in rows] == ["second"]
