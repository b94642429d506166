"""Fault switches: transient errors, latency, dropped writes and dropped connections,
reproducible under --seed."""

from __future__ import annotations

import time
from collections import Counter

import httpx

from connectors.http.retry import RetryPolicy
from connectors.marketing.blocking import BlockingMarketingClient
from connectors.marketing.query import Query
from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY


def statuses(client: httpx.Client, n: int) -> list[int]:
    """The status of ``n`` reads, 0 where the connection was dropped."""
    found = []
    for _ in range(n):
        try:
            found.append(client.get("/orders-carriers").status_code)
        except httpx.RemoteProtocolError:
            found.append(0)
    return found


def test_every_request_faults_at_rate_one_with_transient_statuses(start):
    running = start("--fault-rate", "1", "--seed", "1", "--retry-after", "3")
    client = running.client()

    answers = [client.get("/orders") for _ in range(40)]

    assert {a.status_code for a in answers} <= {429, 500, 502, 503}
    assert len({a.status_code for a in answers}) == 4
    throttled = [a for a in answers if a.status_code == 429]
    assert all(a.headers["retry-after"] == "3" for a in throttled)
    assert all(a.json()["success"] is False for a in answers)
    assert "retry-after" not in {k for a in answers if a.status_code != 429 for k in a.headers}


def test_a_faulted_write_changes_nothing(start):
    running = start("--fault-rate", "1", "--seed", "2", "--visibility-delay", "0")
    client = running.client()
    assert client.post("/orders-carriers", json=[sample_item("carriers")]).status_code >= 429
    stats = running.client().get(running.root + "/_sandbox/stats").json()["data"]
    assert stats["stored"]["carriers"] == 0
    assert stats["pending"] == 0


def test_the_fault_rate_is_the_share_of_faulted_requests(start):
    client = start("--fault-rate", "0.3", "--seed", "7").client()
    share = sum(s != 200 for s in statuses(client, 300)) / 300
    assert 0.22 <= share <= 0.38


def test_the_same_seed_gives_the_same_faults(start):
    faults = ("--fault-rate", "0.3", "--disconnect-rate", "0.2")
    first = statuses(start(*faults, "--seed", "42").client(), 60)
    again = statuses(start(*faults, "--seed", "42").client(), 60)
    other = statuses(start(*faults, "--seed", "43").client(), 60)
    assert first == again
    assert first != other
    assert {0, 200} < set(first)


def test_health_and_openapi_are_never_faulted(start):
    running = start("--fault-rate", "1")
    assert running.client().get(running.root + "/healthz").status_code == 200
    assert running.client().get(running.root + "/openapi.json").status_code == 200


def test_latency_slows_every_answer(start):
    client = start("--latency", "150").client()
    started = time.monotonic()
    for _ in range(3):
        assert client.get("/orders").status_code == 200
    assert time.monotonic() - started >= 0.45


def test_dropped_items_are_accepted_but_never_applied(start):
    running = start("--drop-rate", "0.25", "--seed", "5", "--visibility-delay", "0")
    client = running.client()
    customers = [sample_item("customers", customer_id=f"c{i}", email=f"c{i}@example.com")
                 for i in range(200)]

    sent = sum(client.post("/customers", json=customers[i:i + 50]).json()["sent_count"]
               for i in range(0, 200, 50))
    stored = client.get("/customers", params={"limit": 1000, "fields": "customer_id"}).json()
    stats = client.get(running.root + "/_sandbox/stats").json()["data"]

    assert sent == 200
    dropped = stats["writes"]["customers"]["dropped"]
    assert 30 <= dropped <= 70
    assert stored["meta"]["pagination"]["total_items"] == 200 - dropped


def test_injected_faults_are_counted_by_status(start):
    client = start("--fault-rate", "0.5", "--seed", "9").client()
    counts = Counter(statuses(client, 200))
    assert set(counts) == {200, 429, 500, 502, 503}


def test_dropped_connections_come_before_or_after_the_write_is_applied(start):
    """The client cannot tell the two halves apart; the store can: a drop after the handler
    kept the write. uvicorn must not log a line per drop (nobody reads a test's pipe)."""
    running = start("--disconnect-rate", "0.3", "--seed", "6", "--visibility-delay", "0",
                    own_process=True)
    client = running.client()
    answered: set[str] = set()
    dropped: set[str] = set()
    for i in range(300):
        item = sample_item("customers", customer_id=f"c{i}", email=f"c{i}@example.com")
        try:
            assert client.post("/customers", json=[item]).json()["sent_count"] == 1
        except httpx.RemoteProtocolError:
            dropped.add(item["customer_id"])
        else:
            answered.add(item["customer_id"])
    patient = RetryPolicy(max_attempts=20, initial_backoff=1, max_backoff=0.01, jitter=0)
    with BlockingMarketingClient(running.base_url, DEFAULT_KEY, retry=patient) as api:
        page = api.list_resource("customers", Query().select("customer_id").page(1000))
    stored = {record["customer_id"] for record in page.data}
    stats = client.get(running.root + "/_sandbox/stats").json()["data"]

    assert 0.22 <= len(dropped) / 300 <= 0.38
    assert answered <= stored
    applied_unseen = stored - answered
    assert applied_unseen <= dropped
    assert 0.3 <= len(applied_unseen) / len(dropped) <= 0.7  # half after the handler
    assert stats["writes"]["customers"]["accepted"] == len(stored)
    running.stop()
    assert running.process.stdout is not None
    log = running.process.stdout.read()
    assert "ERROR" not in log and "Traceback" not in log
