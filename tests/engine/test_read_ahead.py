"""A run's read-ahead (``engine/read_ahead.py``): while a stream waits for its quality suite
it reads the rest of that stream, then the next ones in the run's order — each to its end
before the next is opened, up to its limit — and a stream's sync takes those pages first.
The next stream's first page is read beside the stream before. The stage timer adds up what
each stage took."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest

from connectors.sources.base import RawRecord
from pipelines.engine.plan import ReadKind, ReadPlan
from pipelines.engine.read_ahead import (
    READ_AHEAD_RECORDS,
    ReadAhead,
    Reading,
    prefetched,
    read_ahead_limit,
)
from pipelines.engine.stages import STAGES, StageTimer, counted, stage

PLAN = ReadPlan(kind=ReadKind.FULL, after=None, until=datetime(2025, 1, 1, tzinfo=UTC))


class Shop:
    """Pages of records per stream; says in which order they were asked for."""

    def __init__(self, pages: dict[str, int], size: int = 2) -> None:
        self.pages = pages
        self.size = size
        self.asked: list[str] = []  # "stream:page", and "stream:opened"
        self.closed: list[str] = []  # the streams whose reads were closed

    async def read(self, stream: str) -> AsyncIterator[list[RawRecord]]:
        self.asked.append(f"{stream}:opened")
        try:
            for n in range(self.pages[stream]):
                self.asked.append(f"{stream}:{n}")
                await asyncio.sleep(0)
                yield [{"id": f"{stream}-{n}-{i}"} for i in range(self.size)]
        finally:
            self.closed.append(stream)

    def reading(self, stream: str) -> Reading:
        return Reading(stream, PLAN, lambda: self.read(stream))


def test_a_waiting_stream_reads_itself_then_the_next_streams_in_order() -> None:
    shop = Shop({"statuses": 1, "customers": 2, "orders": 5})
    ahead = ReadAhead(["statuses", "customers", "orders"], shop.reading, limit=100)

    async def run() -> list[str]:
        statuses = ahead.reading("statuses")
        first = await statuses.next()
        assert first is not None  # the stream's first page: then it waits for its suite
        while await ahead.step("statuses"):
            pass
        # what was read for the next streams is their time, not the waiting one's
        early = {s: ahead.reading(s).early for s in ("statuses", "customers", "orders")}
        assert early["statuses"] == 0 and early["customers"] > 0 and early["orders"] > 0
        assert ahead.lent == pytest.approx(sum(early.values()))
        return [r["id"] for s in ("statuses", "customers", "orders")
                for page in ahead.reading(s).held for r in page]

    held = asyncio.run(run())
    assert shop.asked == ["statuses:opened", "statuses:0", "customers:opened", "customers:0",
                          "customers:1", "orders:opened", "orders:0", "orders:1", "orders:2",
                          "orders:3", "orders:4"], "each stream to its end before the next"
    assert held[:2] == ["customers-0-0", "customers-0-1"] and len(held) == 14


def test_reading_ahead_stops_at_its_limit_and_a_sync_takes_the_held_pages_first() -> None:
    shop = Shop({"customers": 1, "orders": 10}, size=3)
    ahead = ReadAhead(["customers", "orders"], shop.reading, limit=7)

    async def run() -> list[str]:
        steps = 0
        while await ahead.step("customers"):
            steps += 1
        assert ahead.held() >= 7 and steps == 4  # customers' page, then orders' up to 7+
        assert await ahead.step("orders") is False
        orders = ahead.reading("orders")
        ids = []
        while (page := await orders.next()) is not None:
            ids += [r["id"] for r in page]
        return ids

    ids = asyncio.run(run())
    assert ids == [f"orders-{n}-{i}" for n in range(10) for i in range(3)], "in order, once each"
    assert shop.asked.count("orders:opened") == 1


def test_what_was_opened_and_not_read_to_its_end_is_closed() -> None:
    shop = Shop({"orders": 10})
    ahead = ReadAhead(["orders"], shop.reading, limit=4)

    async def run() -> Reading:
        while await ahead.step("orders"):
            pass
        await ahead.aclose()
        return ahead.reading("orders")

    orders = asyncio.run(run())
    # opened, pages 0 and 1, page 2 asked for ahead of its use, then closed
    assert orders.ended and len(shop.asked) == 4


async def _until(condition: Callable[[], bool], turns: int = 1_000) -> None:
    """Turns of the event loop until ``condition`` holds (a bound, not a pace)."""
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"not so after {turns} turns of the event loop")


def test_the_next_streams_first_page_is_read_beside_the_stream_before() -> None:
    """A drop folder's first page waits for its whole file: asked for once the stream
    before has its first page, it is read while that stream is synced, and no further."""
    shop = Shop({"customers": 3, "orders": 4})
    ahead = ReadAhead(["customers", "orders"], shop.reading, limit=100)

    async def run() -> list[str]:
        customers = ahead.reading("customers")
        ids = [r["id"] for r in await customers.next() or []]
        ahead.open_after("customers")
        await _until(lambda: "orders:1" in shop.asked)
        # the orders' first page is in, and the one after it asked for: no more
        assert shop.asked[-3:] == ["orders:opened", "orders:0", "orders:1"]
        assert "customers:2" not in shop.asked
        for stream in ("customers", "orders"):
            reading = ahead.reading(stream)
            while (page := await reading.next()) is not None:
                ids += [r["id"] for r in page]
        await ahead.aclose()
        return ids

    ids = asyncio.run(run())
    assert ids == [f"{s}-{n}-{i}" for s, pages in (("customers", 3), ("orders", 4))
                   for n in range(pages) for i in range(2)], "in order, once each"
    assert shop.asked.count("orders:opened") == 1 and shop.closed == ["customers", "orders"]


def test_a_next_stream_opened_and_never_reached_is_closed_with_the_run() -> None:
    shop = Shop({"customers": 2, "orders": 10})
    ahead = ReadAhead(["customers", "orders"], shop.reading, limit=100)

    async def run() -> None:
        await ahead.reading("customers").next()
        ahead.open_after("customers")
        ahead.open_after("orders")  # the last stream: none after it
        await _until(lambda: "orders:1" in shop.asked)
        await ahead.aclose()  # the run stopped in the customers stream

    asyncio.run(run())
    assert "orders:2" not in shop.asked
    assert sorted(shop.closed) == ["customers", "orders"]
    assert ahead.reading("orders").ended


def test_a_next_streams_read_that_fails_is_said_when_the_run_reaches_it() -> None:
    async def failing() -> AsyncIterator[list[RawRecord]]:
        raise RuntimeError("the orders file cannot be read")
        yield []  # pragma: no cover - an async generator

    shop = Shop({"customers": 2})
    readings = {"customers": shop.reading("customers"),
                "orders": Reading("orders", PLAN, failing)}
    ahead = ReadAhead(["customers", "orders"], lambda s: readings[s], limit=100)

    async def run() -> list[str]:
        customers = ahead.reading("customers")
        ids = []
        while (page := await customers.next()) is not None:
            ahead.open_after("customers")
            ids += [r["id"] for r in page]
        with pytest.raises(RuntimeError, match="the orders file cannot be read"):
            await ahead.reading("orders").next()
        await ahead.aclose()
        return ids

    assert asyncio.run(run()) == ["customers-0-0", "customers-0-1", "customers-1-0",
                                  "customers-1-1"]


def test_what_a_run_reads_ahead_for_a_pending_suite_does_not_grow_with_its_chunks() -> None:
    # the import lasts the same whatever the chunk: so does the read-ahead, a chunk at least
    assert read_ahead_limit(2_000) == read_ahead_limit(10) == READ_AHEAD_RECORDS
    larger = 2 * READ_AHEAD_RECORDS
    assert read_ahead_limit(larger) == larger  # a chunk larger than that, not more


def test_a_stage_timer_adds_up_each_stage_and_no_timer_costs_nothing() -> None:
    timer = StageTimer()
    for _ in range(3):
        with timer.stage("map"):
            sum(range(1000))
    with stage(None, "map"):  # no timer: a no-op
        pass
    assert list(timer.times)[: len(STAGES)] == list(STAGES)
    assert timer.times["map"].calls == 3 and timer.times["read"].calls == 0
    wall, cpu = timer.seconds()["map"]
    assert wall >= 0 and cpu >= 0


def test_work_handed_to_a_worker_thread_counts_in_its_stages_cpu() -> None:
    timer = StageTimer()

    def busy() -> int:
        deadline = time.thread_time_ns() + 20_000_000  # 20 ms of this thread's CPU
        while time.thread_time_ns() < deadline:
            pass
        return 7

    async def run() -> int:
        with timer.stage("ledger"):
            return await asyncio.to_thread(counted, timer, "ledger", busy)

    assert asyncio.run(run()) == 7
    # the syncing thread only waited; the worker's CPU is the stage's
    assert timer.times["ledger"].worker_cpu_ns >= 20_000_000
    assert timer.seconds()["ledger"][1] >= 0.02
    assert counted(None, "ledger", lambda: 3) == 3  # no timer: just the call


def _burn(ms: int) -> None:
    """``ms`` milliseconds of this thread's CPU (not of the wall clock)."""
    deadline = time.thread_time_ns() + ms * 1_000_000
    while time.thread_time_ns() < deadline:
        pass


def test_cpu_spent_by_a_task_goes_to_its_stage_not_to_the_one_another_task_waits_in() -> None:
    timer = StageTimer()

    async def run() -> None:
        pushed = asyncio.Event()

        async def push() -> None:
            with timer.stage("push"):
                await asyncio.sleep(0)
                _burn(30)  # a push's HTTP work, while the stream waits for its read
            _burn(10)  # its task's work outside any stage
            pushed.set()

        task = asyncio.create_task(push())
        with timer.stage("read"):
            await pushed.wait()
        asyncio.get_running_loop().call_soon(_burn, 20)  # the loop's own work
        with timer.stage("quality"):
            await asyncio.sleep(0)  # the callback runs while this task waits
        await task

    asyncio.run(timer.run(run()))
    cpu = {name: seconds for name, (_, seconds) in timer.seconds().items()}
    assert cpu["push"] >= 0.03
    assert cpu["read"] < 0.01 and cpu["quality"] < 0.01  # they only waited
    assert timer.elsewhere()["event loop"] >= 0.02 and timer.elsewhere()["unstaged"] >= 0.01
    # the wall time stays the thread's view: the read was open, and entered last, while
    # the push began
    assert timer.times["read"].calls == 1 and timer.times["push"].calls == 1


class Pages:
    """A shop's pages of one stream: says which it was asked for and whether it was closed."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.asked: list[int] = []
        self.closed = False

    async def __call__(self) -> AsyncIterator[list[RawRecord]]:
        try:
            for n in range(self.count):
                self.asked.append(n)
                await asyncio.sleep(0)  # a turn of the loop: the request goes out
                yield [{"id": n}]
        finally:
            self.closed = True


def test_the_next_page_is_asked_for_before_the_one_before_it_is_worked_on() -> None:
    shop = Pages(4)

    async def run() -> list[tuple[int, list[int]]]:
        seen = []
        async for page in prefetched(shop()):
            seen.append((page[0]["id"], list(shop.asked)))
        return seen

    assert asyncio.run(run()) == [(0, [0, 1]), (1, [0, 1, 2]), (2, [0, 1, 2, 3]),
                                  (3, [0, 1, 2, 3])]
    assert shop.closed


def test_a_read_stopped_early_asks_for_no_more_and_closes_the_shops_pages() -> None:
    shop = Pages(10)

    async def run() -> None:
        read = prefetched(shop())
        assert (await anext(read))[0]["id"] == 0
        await read.aclose()

    asyncio.run(run())
    assert shop.asked == [0, 1] and shop.closed
