"""The clients' connection pool (``connectors/http/lanes.py``): one request per lane, the
rest waiting in arrival order, a limit that can be raised while requests wait, and lanes
given back whatever becomes of a request. Lanes here are mock transports that answer when
the test says so (no sockets, no waiting on wall-clock time)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from connectors.http.lanes import LanePool
from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import BulkWriter


class Lanes:
    """Builds mock lanes; each answer waits for ``go`` and records which lane served it."""

    def __init__(self) -> None:
        self.made = 0
        self.go = asyncio.Event()
        self.served: list[tuple[str, int]] = []

    def __call__(self) -> httpx.AsyncBaseTransport:
        self.made += 1
        lane = self.made

        async def answer(request: httpx.Request) -> httpx.Response:
            await self.go.wait()
            if request.url.path == "/fail":
                raise httpx.ConnectError("refused", request=request)
            self.served.append((request.url.path, lane))
            # a body still to read, as a real connection gives (read, then closed)
            return httpx.Response(200, stream=httpx.ByteStream(b"ok"))

        return httpx.MockTransport(answer)


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def test_requests_beyond_the_limit_wait_in_arrival_order_and_reuse_the_lanes():
    async def run() -> tuple[Lanes, list[str]]:
        lanes = Lanes()
        pool = LanePool(2, lanes)
        async with httpx.AsyncClient(transport=pool, base_url="http://api") as client:
            tasks = [asyncio.create_task(client.get(f"/{i}")) for i in range(5)]
            await settle()
            assert (lanes.made, pool.busy) == (2, 2)
            lanes.go.set()
            answers = await asyncio.gather(*tasks)
            assert pool.busy == 0
        return lanes, [a.text for a in answers]

    lanes, texts = asyncio.run(run())
    assert texts == ["ok"] * 5
    assert lanes.made == 2, "a lane was opened beyond the limit"
    assert [path for path, _ in lanes.served] == ["/0", "/1", "/2", "/3", "/4"]


def test_raising_the_limit_opens_lanes_for_the_requests_waiting():
    async def run() -> Lanes:
        lanes = Lanes()
        pool = LanePool(1, lanes)
        async with httpx.AsyncClient(transport=pool, base_url="http://api") as client:
            tasks = [asyncio.create_task(client.get(f"/{i}")) for i in range(4)]
            await settle()
            assert lanes.made == 1
            pool.allow(3)
            pool.allow(2)  # never lowers it
            assert (pool.limit, lanes.made, pool.busy) == (3, 3, 3)
            lanes.go.set()
            await asyncio.gather(*tasks)
        return lanes

    assert asyncio.run(run()).made == 3


def test_a_lane_comes_back_after_a_failure_a_cancellation_and_a_pool_timeout():
    async def run() -> None:
        lanes = Lanes()
        pool = LanePool(1, lanes)
        async with httpx.AsyncClient(transport=pool, base_url="http://api") as client:
            busy = asyncio.create_task(client.get("/held"))
            await settle()
            with pytest.raises(httpx.PoolTimeout):
                await client.get("/late", timeout=httpx.Timeout(5.0, pool=0.001))
            waiting = asyncio.create_task(client.get("/cancelled"))
            await settle()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            lanes.go.set()
            await busy
            with pytest.raises(httpx.ConnectError):
                await client.get("/fail")
            assert (await client.get("/after")).text == "ok"
            assert (pool.busy, lanes.made) == (0, 1)

    asyncio.run(run())


def test_a_bulk_writer_raises_its_clients_pool_to_its_ceiling():
    client = MarketingClient("http://127.0.0.1:9/v1", "abcdefgh.key")
    pool = client.transport._pool
    assert pool is not None and pool.limit == 32
    BulkWriter(client, "customers", concurrency=8, max_concurrency=48)
    assert pool.limit == 48
    BulkWriter(client, "customers", concurrency=8, max_concurrency=16)
    assert pool.limit == 48
