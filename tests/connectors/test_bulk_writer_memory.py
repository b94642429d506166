"""The bulk writer's bounded memory: it holds a bounded number of items, waits for a slow
consumer, and stopping early cancels the batches in flight.
"""

from __future__ import annotations

import asyncio
import gc

import httpx

from connectors.marketing.client import MarketingClient
from connectors.marketing.writer import BulkWriter
from tests.connectors.writer_support import FAST, CountingItems, customer, sandbox_stats

# bounded memory -----------------------------------------------------------------------------


def test_a_batch_written_is_freed_once_answered_without_the_cycle_collector(sandbox, fresh_key):
    """httpx binds an answer and its body stream to each other (a reference cycle), and the
    answer holds its request: a batch's JSON. Freed only by the cyclic collector, which a
    sync paces (``pipelines.engine.collector``), they outlived their batch: a sync's memory
    grew with the batches it had written."""
    key = fresh_key()

    def messages() -> set[int]:
        return {id(o) for o in gc.get_objects() if isinstance(o, httpx.Request | httpx.Response)}

    async def write() -> set[int]:
        async with MarketingClient(sandbox.base_url, key, retry=FAST) as client:
            before = messages()
            for batch in range(5):
                await client.bulk_save("customers", [customer(f"{batch}-{i}") for i in range(20)])
            return messages() - before

    gc.collect()
    gc.disable()
    try:
        left = asyncio.run(write())
    finally:
        gc.enable()

    assert left == set()



async def held_up(writer: BulkWriter, within: float = 30.0) -> None:
    """Return once the writer's input waits for the consumer: every slot is held, so it can
    take nothing more until the consumer goes on. Fails after ``within`` seconds, a bound
    far above the time that takes, so a slow machine only makes the wait longer."""
    async with asyncio.timeout(within):
        while not writer.limiter.waiting:
            await asyncio.sleep(0.005)


def test_the_writer_holds_a_bounded_number_of_items_and_waits_for_a_slow_consumer(
    sandbox, fresh_key
):
    key = fresh_key()
    concurrency, batch = 4, 50
    bound = concurrency * batch + batch
    items = CountingItems(10_000)

    async def run() -> tuple[int, int, BulkWriter]:
        completed = held_most = 0
        async with MarketingClient(sandbox.base_url, key, retry=FAST) as client:
            # a fixed limit: AIMD, cutting it on a slow answer, would blur what is held
            writer = BulkWriter(client, "customers", concurrency=concurrency, adaptive=False)
            async for _ in writer.write(items):
                completed += 1
                held_most = max(held_most, items.taken - completed)
                assert items.taken - completed <= bound
                if completed % 1_000 == 0 and completed <= items.n - 2 * bound:
                    # a slow consumer: it stops until the writer's input waits for it
                    await held_up(writer)
                    held_most = max(held_most, items.taken - completed)
                    assert items.taken - completed <= bound
        return completed, held_most, writer

    completed, held_most, writer = asyncio.run(run())

    assert completed == 10_000
    assert held_most > batch, "batches never overlapped"
    assert writer.limiter.peak <= concurrency
    assert sandbox_stats(sandbox, key)["stored"]["customers"] == 10_000


def test_stopping_early_cancels_the_batches_in_flight(sandbox, fresh_key):
    async def run() -> int:
        async with MarketingClient(sandbox.base_url, fresh_key(), retry=FAST) as client:
            writer = BulkWriter(client, "customers", concurrency=4)
            outcomes = writer.write(customer(i) for i in range(10_000))
            seen = 0
            async for _ in outcomes:
                seen += 1
                if seen == 120:
                    break
            await outcomes.aclose()
        return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])

    assert asyncio.run(run()) == 0
