"""A chunk's delivery beside the sync's other work, end to end on WooCommerce (a fake shop →
the sandbox, over real HTTP, with a real SQLite state store): the next chunk is checked while
one is pushed, a chunk is pushed while the one before it is recorded, and the chunks are
still recorded in order, each once, with what was pushed before a failure."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus
from sandbox.shops.woocommerce.launch import RunningFakeShop
from tests.engine.drivers.woocommerce import DRIVER, make_setup, start_shop

SOURCE = DRIVER.source


@pytest.fixture
def shop() -> Iterator[RunningFakeShop]:
    running = start_shop()
    yield running
    running.stop()


def test_an_item_of_consecutive_chunks_is_sent_once_while_the_first_is_still_being_sent(
    engine_setup, shop
):
    """A chunk is checked while the one before it is pushed; an item it shares with that one
    (a carrier named by orders of both) is diffed against what the chunk in flight sends of
    it, so the same content is not sent a second time."""
    setup = make_setup(engine_setup, shop, tuning={"chunk_items": 5, "page_size": 5})

    orders = setup.run_by_stream()["orders"]

    carriers = {e.key for e in setup.state.entries(SOURCE, "carriers")}
    assert 0 < len(carriers) < orders.records / 5, "carriers recur from chunk to chunk"
    assert orders.counts["carriers"]["pushed"] == len(carriers)
    assert orders.counts["carriers"]["accepted"] == len(carriers)
    assert (orders.counts["orders"]["accepted"] + orders.counts["orders"]["quarantined"]
            == orders.records)


class NotingLedger:
    """The run's state store, noting the order in which ``resource``'s chunks are looked up
    and recorded; ``looked_up(n)`` waits until the n-th chunk has been."""

    def __init__(self, state: Any, resource: str) -> None:
        self._state, self._resource = state, resource
        self.order: list[str] = []
        self._events: dict[int, asyncio.Event] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)

    def count(self, what: str) -> int:
        return sum(entry.startswith(what) for entry in self.order)

    def _event(self, n: int) -> asyncio.Event:
        return self._events.setdefault(n, asyncio.Event())

    async def looked_up(self, n: int) -> None:
        await asyncio.wait_for(self._event(n).wait(), timeout=60)

    def states(self, source: str, resource: str, keys: list[str]) -> Any:
        if resource == self._resource:
            self.order.append(f"looked up {self.count('looked up') + 1}")
            self._event(self.count("looked up")).set()
        return self._state.states(source, resource, keys)

    def record(self, source: str, resource: str, outcomes: Any, **kwargs: Any) -> None:
        if resource == self._resource:
            self.order.append(f"recorded {self.count('recorded') + 1}")
        self._state.record(source, resource, outcomes, **kwargs)


def customer_chunks(setup: Any) -> int:
    """How many chunks the customers stream is synced in (counted by a dry run): at least
    three, for a chunk to have one before and one after it."""
    counting = NotingLedger(setup.state, "customers")
    asyncio.run(SourceRunner(setup.config, setup.config.sources[0], counting, setup.env,
                             setup.clock).run(streams=["customers"], dry_run=True))
    chunks = counting.count("looked up")
    assert chunks >= 3
    return chunks


class HeldPushes(SourceRunner):
    """A runner whose client holds the push of each chunk of ``ledger``'s resource but the
    last (``chunks`` of them) until the next chunk has been looked up: only a sync that goes
    on while its push waits gets past it."""

    def __init__(self, setup: Any, ledger: NotingLedger, resource: str, chunks: int) -> None:
        super().__init__(setup.config, setup.config.sources[0], ledger, setup.env, setup.clock)
        self.ledger, self.resource, self.chunks = ledger, resource, chunks

    def open_client(self) -> Any:
        client = super().open_client()
        bulk_save, pushed = client.bulk_save, [0]

        async def held(resource: str, items: Any, **kwargs: Any) -> Any:
            if resource == self.resource:
                pushed[0] += 1
                if pushed[0] < self.chunks:
                    await self.ledger.looked_up(pushed[0] + 1)
            return await bulk_save(resource, items, **kwargs)

        client.bulk_save = held
        return client


def test_a_chunk_is_checked_while_the_one_before_it_is_sent_and_recorded(engine_setup, shop):
    """The next chunk's items are looked up in the ledger before the chunk before them is
    recorded: its delivery (push and record) runs beside the next chunk's read and checks.
    Shown without timing: the push of each chunk but the last waits until the next chunk
    has been looked up, which only a sync that goes on while it waits can do."""
    setup = make_setup(engine_setup, shop, tuning={"chunk_items": 5, "page_size": 5})
    chunks = customer_chunks(setup)

    ledger = NotingLedger(setup.state, "customers")
    (report,) = asyncio.run(HeldPushes(setup, ledger, "customers", chunks).run(
        streams=["customers"]))

    assert (report.counts["customers"]["accepted"] + report.counts["customers"]["quarantined"]
            == report.records)
    order = ledger.order
    assert [e for e in order if e.startswith("looked up")] == [
        f"looked up {chunk}" for chunk in range(1, chunks + 1)]
    assert [e for e in order if e.startswith("recorded")] == [
        f"recorded {chunk}" for chunk in range(1, chunks + 1)]
    for chunk in range(1, chunks):
        assert order.index(f"looked up {chunk + 1}") < order.index(f"recorded {chunk}"), (
            f"chunk {chunk + 1} is looked up before chunk {chunk} is recorded")


class RecordsHeldForTheNextPush(HeldPushes):
    """A runner whose ledger holds the record of each chunk of ``resource`` but the last
    until the next chunk's push has begun: only a sync that pushes a chunk while the one
    before it is recorded gets past it (else the record gives up waiting, and says so)."""

    def __init__(self, setup: Any, ledger: NotingLedger, resource: str, chunks: int) -> None:
        super().__init__(setup, ledger, resource, chunks)
        self.pushes_begun = 0
        self.begun = [threading.Event() for _ in range(chunks + 1)]
        self.gave_up: list[int] = []
        record = ledger.record

        def held(source: str, resource: str, outcomes: Any, **kwargs: Any) -> None:
            if resource == self.resource:
                chunk = ledger.count("recorded") + 1
                if chunk < chunks and not self.begun[chunk + 1].wait(timeout=60):
                    self.gave_up.append(chunk)
            record(source, resource, outcomes, **kwargs)

        ledger.record = held  # type: ignore[method-assign]

    def open_client(self) -> Any:
        client = SourceRunner.open_client(self)
        bulk_save = client.bulk_save

        async def noted(resource: str, items: Any, **kwargs: Any) -> Any:
            if resource == self.resource:
                self.pushes_begun += 1
                self.begun[self.pushes_begun].set()
            return await bulk_save(resource, items, **kwargs)

        client.bulk_save = noted
        return client


def test_a_chunk_is_pushed_while_the_one_before_it_is_recorded(engine_setup, shop):
    """A chunk's record (in a worker thread, mostly the database's own work) runs beside
    the next chunk's push; the chunks are still recorded in order, each once. Shown without
    timing: each record but the last waits until the next chunk's push has begun."""
    setup = make_setup(engine_setup, shop, tuning={"chunk_items": 5, "page_size": 5})
    chunks = customer_chunks(setup)

    ledger = NotingLedger(setup.state, "customers")
    runner = RecordsHeldForTheNextPush(setup, ledger, "customers", chunks)
    (report,) = asyncio.run(runner.run(streams=["customers"]))

    assert runner.gave_up == [], "a record waited for the next chunk's push in vain"
    recorded = [entry for entry in ledger.order if entry.startswith("recorded")]
    assert recorded == [f"recorded {chunk}" for chunk in range(1, chunks + 1)]
    assert (report.counts["customers"]["accepted"] + report.counts["customers"]["quarantined"]
            == report.records)
    accepted = setup.state.entries(SOURCE, "customers", {ItemStatus.ACCEPTED})
    assert len(accepted) == report.counts["customers"]["accepted"]


class FailingSecondAddresses(SourceRunner):
    """A runner whose client fails the push of the second chunk's addresses, after that
    chunk's customers were pushed."""

    def open_client(self) -> Any:
        client = super().open_client()
        bulk_save, pushes = client.bulk_save, [0]

        async def failing(resource: str, items: Any, **kwargs: Any) -> Any:
            if resource == "addresses":
                pushes[0] += 1
                if pushes[0] == 2:
                    raise RuntimeError("the addresses route broke")
            return await bulk_save(resource, items, **kwargs)

        client.bulk_save = failing
        return client


def test_a_push_failing_mid_chunk_records_what_was_pushed_before_it(engine_setup, shop):
    """The second chunk's customers are pushed, then its addresses fail: the run fails with
    that failure, and the ledger holds the first chunk whole and the second chunk's
    customers — what was pushed — but none of its addresses, nor anything after it."""
    setup = make_setup(engine_setup, shop, tuning={"chunk_items": 10, "page_size": 5})
    runner = FailingSecondAddresses(setup.config, setup.config.sources[0], setup.state,
                                    setup.env, setup.clock)

    with pytest.raises(RuntimeError, match="the addresses route broke"):
        asyncio.run(runner.run(streams=["customers"]))

    customers = setup.state.entries(SOURCE, "customers")
    addresses = setup.state.entries(SOURCE, "addresses")
    first_chunk = {a.source_record_id for a in addresses}
    assert first_chunk and len(addresses) <= 10
    assert first_chunk < {c.source_record_id for c in customers}, (
        "the failing chunk's customers are recorded beside the first chunk's")
    assert len(customers) <= 2 * 10
    assert all(c.status is not ItemStatus.FAILED for c in customers)
