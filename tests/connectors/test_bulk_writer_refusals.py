"""The bulk writer when a batch or the run itself is refused: a batch refused whole is
split until the culprit stands alone; a 4xx about the request, an unknown key or a malformed
key stops the run.

One whole-batch 400 comes from an ``httpx.MockTransport``: no real server refuses a
valid-sized batch with a 400 today.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import httpx
import pytest

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import AuthenticationError, ClientConfigError, RequestRejected
from connectors.marketing.writer import BatchOutcome, BulkWriter
from sandbox.marketing.settings import DEFAULT_KEY
from tests.connectors.writer_support import (
    FAST,
    CountingItems,
    by_key,
    customer,
    push,
    sandbox_stats,
)

# whole-batch refusals -------------------------------------------------------------------


class BodyLimitGateway(httpx.AsyncBaseTransport):
    """A gateway in front of the real sandbox that answers 413 to bodies over ``limit``
    bytes, as a reverse proxy's body-size limit does; everything else goes through."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.refused = 0
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if len(request.content) > self.limit:
            self.refused += 1
            return httpx.Response(
                413, json={"statusCode": 413, "message": "Request Entity Too Large"}
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_a_batch_refused_whole_is_halved_until_the_culprit_stands_alone(sandbox, fresh_key):
    key = fresh_key()
    items = [customer(i) for i in range(50)]
    items[17] = customer(17, first_name="x" * 100_000)
    items[16] = customer(16, is_opt_in="yes")  # rejected per item inside a small half
    items[30] = customer(30, email="nope")  # rejected per item inside the other half
    gateway = BodyLimitGateway(limit=64_000)

    outcomes, writer = asyncio.run(push(sandbox.base_url, key, items, transport=gateway))

    found = by_key(outcomes)
    assert found["c17"].status == "rejected"
    assert found["c17"].errors == ("413: Request Entity Too Large",)
    assert found["c17"].item is items[17]
    assert found["c17"].splits == 6  # 50 → 25 → 13 → 6 → 3 → 2 → 1: alone at last
    assert found["c16"].status == "rejected" and "is_opt_in" in found["c16"].errors[0]
    assert found["c30"].status == "rejected" and "email" in found["c30"].errors[0]
    accepted = {k for k, o in found.items() if o.status == "accepted"}
    assert accepted == {f"c{i}" for i in range(50)} - {"c16", "c17", "c30"}
    assert gateway.refused == writer.splits + 1  # every refusal but the last one split
    assert sandbox_stats(sandbox, key)["stored"]["customers"] == 47


def test_an_item_that_is_not_json_is_isolated_before_sending(sandbox, fresh_key):
    key = fresh_key()
    items = [customer(i) for i in range(50)]
    items[40] = customer(40, group_ids={"g1"})  # a set: orjson cannot encode it

    outcomes, _ = asyncio.run(push(sandbox.base_url, key, items))

    found = by_key(outcomes)
    assert found["c40"].status == "rejected"
    assert "cannot be sent as JSON" in found["c40"].errors[0]
    assert Counter(o.status for o in outcomes) == {"accepted": 49, "rejected": 1}
    assert sandbox_stats(sandbox, key)["stored"]["customers"] == 49


def fake_api(whole_batch_status: int) -> httpx.MockTransport:
    """An API that refuses a whole batch holding a ``poison`` item with
    ``whole_batch_status``, and otherwise rejects ``bad`` items one by one."""

    def handle(request: httpx.Request) -> httpx.Response:
        batch = json.loads(request.content)
        if any(item.get("poison") for item in batch):
            return httpx.Response(whole_batch_status, json={
                "statusCode": whole_batch_status, "message": "Malformed batch",
                "errors": ["[3].email: unsupported encoding"]})
        rejected = [{"index": i, "item": item, "errors": [f"{item['customer_id']} is bad"]}
                    for i, item in enumerate(batch) if item.get("bad")]
        return httpx.Response(200, json={
            "statusCode": 200, "sent_count": len(batch) - len(rejected),
            "rejected_count": len(rejected), "rejected_items": rejected})

    return httpx.MockTransport(handle)


def test_a_whole_batch_400_is_split_and_indexes_map_to_the_halves():
    items = [customer(i) for i in range(50)]
    items[33] = customer(33, poison=True)
    for i in (2, 30, 34, 49):
        items[i] = customer(i, bad=True)

    outcomes, writer = asyncio.run(
        push("http://127.0.0.1:9/v1", DEFAULT_KEY, items, transport=fake_api(400))
    )

    found = by_key(outcomes)
    assert found["c33"].errors == ("400: [3].email: unsupported encoding",)
    assert {k: o.errors for k, o in found.items() if o.status == "rejected" and k != "c33"} == {
        f"c{i}": (f"c{i} is bad",) for i in (2, 30, 34, 49)
    }
    assert Counter(o.status for o in outcomes) == {"accepted": 45, "rejected": 5}
    assert writer.splits >= 5


def test_a_halved_batch_comes_back_whole_each_item_saying_how_often_its_part_was_halved():
    items = [customer(i) for i in range(8)]
    items[5] = customer(5, poison=True)

    async def run() -> list[BatchOutcome]:
        async with MarketingClient("http://127.0.0.1:9/v1", DEFAULT_KEY, retry=FAST,
                                   transport=fake_api(400)) as client:
            writer = BulkWriter(client, "customers", batch_size=8)
            return [batch async for batch in writer.write_batches(items)]

    [batch] = asyncio.run(run())

    assert batch.items == items
    assert batch.splits == (1, 1, 1, 1, 3, 3, 2, 2)  # 8 → 4 → 2 → 1: item 5 alone at last
    assert list(batch.refused) == [5]
    assert batch.refused[5].splits == 3
    assert [o.splits for o in batch.outcomes()] == list(batch.splits)


def test_a_4xx_about_the_request_itself_stops_the_run():
    items = [customer(i, poison=True) for i in range(10)]
    with pytest.raises(RequestRejected) as caught:
        asyncio.run(push("http://127.0.0.1:9/v1", DEFAULT_KEY, items, transport=fake_api(409)))
    assert caught.value.status_code == 409


# configuration errors stop everything ---------------------------------------------------


def test_an_unknown_key_stops_the_run_with_authentication_error(start):
    running = start("--visibility-delay", "0")  # only the default key opens a shop
    items = CountingItems(100_000)

    with pytest.raises(AuthenticationError):
        asyncio.run(push(running.base_url, "unknown1.not-a-shop-key", items, concurrency=4))
    assert items.taken <= 5 * 50


def test_a_malformed_key_stops_the_run_before_any_request():
    with pytest.raises(ClientConfigError):
        asyncio.run(push("http://127.0.0.1:9/v1", "no-dot-here", CountingItems(1_000)))
