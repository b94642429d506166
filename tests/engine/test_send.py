"""What ``send`` hands the ledger: one outcome per item sent, the status the API gave it, its
errors when refused, and the counts a report keeps, a batch at a time."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import httpx
import orjson

from connectors.marketing.client import MarketingClient
from pipelines.engine.send import send
from pipelines.engine.state import ItemStatus, Outcome
from sandbox.marketing.settings import DEFAULT_KEY


def refusing(bad: set[str], bodies: list[bytes] | None = None) -> httpx.MockTransport:
    """An API that rejects the orders whose id is in ``bad`` and accepts the rest (each
    request's body kept in ``bodies``)."""

    def handle(request: httpx.Request) -> httpx.Response:
        if bodies is not None:
            bodies.append(request.content)
        batch = json.loads(request.content)
        rejected = [{"index": i, "errors": [f"{item['order_id']} is bad"]}
                    for i, item in enumerate(batch) if item["order_id"] in bad]
        return httpx.Response(200, json={
            "statusCode": 200, "sent_count": len(batch) - len(rejected),
            "rejected_count": len(rejected), "rejected_items": rejected})

    return httpx.MockTransport(handle)


def pending(ids: range) -> dict[str, Outcome]:
    return {str(i): Outcome(str(i), f"h{i}", ItemStatus.ACCEPTED, f"r{i}", (),
                            {"order_id": str(i)}) for i in ids}


def sent(items: dict[str, Outcome], bad: set[str], bodies: list[bytes] | None = None
         ) -> tuple[list[Outcome], list[tuple[str, int]]]:
    counts: list[tuple[str, int]] = []

    async def run() -> list[Outcome]:
        async with MarketingClient("http://127.0.0.1:9/v1", DEFAULT_KEY,
                                   transport=refusing(bad, bodies)) as client:
            return await send(client, "orders", items, concurrency=1,
                              on_status=lambda status, n: counts.append((status, n)))

    return asyncio.run(run()), counts


def test_an_accepted_item_is_recorded_as_it_was_given_and_a_rejected_one_with_its_errors() -> None:
    items = pending(range(60))

    outcomes, _ = sent(items, bad={"7"})

    found = {o.key: o for o in outcomes}
    assert len(outcomes) == len(found) == 60
    assert found["8"] is items["8"]
    assert found["7"] == Outcome("7", "h7", ItemStatus.REJECTED, "r7", ["7 is bad"],
                                 {"order_id": "7"})
    assert {o.status for k, o in found.items() if k != "7"} == {ItemStatus.ACCEPTED}


def test_a_report_hears_each_batchs_counts_in_the_order_their_statuses_first_appear() -> None:
    _, counts = sent(pending(range(60)), bad={"0", "1", "55"})

    assert counts == [("rejected", 2), ("accepted", 48), ("accepted", 9), ("rejected", 1)]


def test_an_item_is_recorded_under_the_key_it_was_sent_under_whatever_its_payload_names(
) -> None:
    items = {"old": Outcome("old", "h", ItemStatus.FAILED, "r", ["timeout"], {"order_id": "9"})}

    outcomes, _ = sent(items, bad=set())

    assert outcomes == [Outcome("old", "h", ItemStatus.ACCEPTED, "r", [], {"order_id": "9"})]


def test_items_pending_as_their_json_go_out_as_the_same_bytes_and_are_recorded_by_key(
) -> None:
    as_fields = pending(range(60))
    as_json = {key: replace(o, payload=orjson.Fragment(orjson.dumps(o.payload)))
               for key, o in as_fields.items()}
    bodies: list[list[bytes]] = [[], []]

    fields_outcomes, _ = sent(as_fields, bad={"7", "55"}, bodies=bodies[0])
    json_outcomes, _ = sent(as_json, bad={"7", "55"}, bodies=bodies[1])

    assert bodies[0] == bodies[1] and len(bodies[0]) == 2
    found = {o.key: o for o in json_outcomes}
    assert len(found) == 60 and found["8"] is as_json["8"]
    assert [(o.key, o.status, o.errors) for o in json_outcomes] == [
        (o.key, o.status, o.errors) for o in fields_outcomes]
    assert found["7"].status is ItemStatus.REJECTED and found["7"].errors == ["7 is bad"]
    assert found["7"].payload is as_json["7"].payload
