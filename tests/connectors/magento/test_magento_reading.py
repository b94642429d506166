"""The Magento connector reading the fake shop over real localhost HTTP: every stream read
whole and once, id listings for deletions, resumable from any position, changes read
exactly once after the last position (ties bigger than a page included, a record changed
mid-read included), UTC positions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from connectors.sources.base import Position
from connectors.sources.magento.connector import DEFAULT_STATUSES, position_of
from tests.connectors.magento.support import INCREMENTAL, Start, ascending, keys, listed_ids, read

# reading whole streams --------------------------------------------------------------------

@pytest.mark.parametrize("stream", INCREMENTAL)
def test_every_stream_is_read_completely_once_in_position_order(shop, stream) -> None:
    expected = {str(i) for i in shop.fake().get(f"/{stream}/ids").json()["ids"]}
    records = read(shop, stream, page_size=7)
    assert sorted(keys(stream, records)) == sorted(expected)
    assert ascending(stream, records)
    assert sorted(listed_ids(shop, stream, page_size=7), key=int) == sorted(expected, key=int)


def test_statuses_are_magentos_defaults_plus_the_configured_ones(shop) -> None:
    records = read(shop, "statuses", order_statuses={"ready_for_pickup": "Ready for Pickup",
                                                     "complete": "Done"})
    labels = {r["status"]: r["label"] for r in records}
    assert len(labels) == len(DEFAULT_STATUSES) + 1
    assert labels["ready_for_pickup"] == "Ready for Pickup" and labels["complete"] == "Done"
    assert labels["holded"] == "On Hold"
    assert sorted(listed_ids(shop, "statuses", order_statuses={"ready_for_pickup": "R"})) == sorted(
        labels)


def test_a_read_resumes_after_any_position_with_exactly_the_rest(shop) -> None:
    records = read(shop, "orders", page_size=25)
    for cut in (0, 1, 57, len(records) // 2, len(records) - 1):
        after = position_of("orders", records[cut])
        rest = read(shop, "orders", after=after, page_size=25)
        assert keys("orders", rest) == keys("orders", records[cut + 1:]), cut


def test_ties_bigger_than_a_page_are_walked_by_id(shop) -> None:
    records = read(shop, "products", page_size=3)
    seconds = [position_of("products", r).changed_at for r in records]
    assert max(seconds.count(s) for s in set(seconds)) > 3
    tied = seconds[[seconds.count(s) for s in seconds].index(max(seconds.count(s) for s in seconds))]
    first = next(i for i, s in enumerate(seconds) if s == tied)
    rest = read(shop, "products", after=position_of("products", records[first + 1]), page_size=3)
    assert keys("products", rest) == keys("products", records[first + 2:])


def test_until_bounds_the_read_and_a_fractional_after_starts_at_the_next_second(shop) -> None:
    records = read(shop, "customers")
    times = sorted({position_of("customers", r).changed_at for r in records})
    middle = times[len(times) // 2]
    upto = read(shop, "customers", until=middle + timedelta(microseconds=500_000))
    assert keys("customers", upto) == [position_of("customers", r).record_id for r in records
                                       if position_of("customers", r).changed_at <= middle]
    after = Position(middle - timedelta(microseconds=1))
    assert keys("customers", read(shop, "customers", after=after)) == [
        position_of("customers", r).record_id for r in records
        if position_of("customers", r).changed_at >= middle]


# changes ------------------------------------------------------------------------------------

def test_changes_are_read_exactly_once_after_the_last_position(start_shop: Start) -> None:
    running = start_shop("--orders", "60", "--seed", "3")
    before = read(running, "orders", page_size=10)
    last = position_of("orders", before[-1])
    fake = running.fake()
    fake.post("/clock", json={"now": "2026-01-15 08:00:00"})
    fake.post("/orders/touch", json={"ids": [9, 4, 30, 17]})  # four at one second
    fake.post("/clock", json={"advance": 1})
    fake.put("/orders/12", json={"status": "closed", "state": "closed"})
    fake.post("/clock", json={"advance": 1})
    created = fake.post("/orders", json={}).json()

    changed = read(running, "orders", after=last, page_size=2)

    assert keys("orders", changed) == ["4", "9", "17", "30", "12", str(created["entity_id"])]
    assert {c["updated_at"] for c in changed[:4]} == {"2026-01-15 08:00:00"}
    assert read(running, "orders", after=position_of("orders", changed[-1])) == []


def test_a_record_changed_between_two_pages_is_read_once_at_its_new_place(start_shop: Start) -> None:
    running = start_shop("--orders", "40", "--seed", "4")
    everything = keys("orders", read(running, "orders"))
    late = everything[3]  # not read yet when the first page of 2 comes back
    fake = running.fake()
    requests = 0

    def touch_after_first(request: httpx.Request) -> None:
        nonlocal requests
        requests += 1
        if requests == 2:
            fake.post(f"/orders/{late}/touch")

    transport = httpx.AsyncHTTPTransport()
    hooked = _Hooked(transport, touch_after_first)
    records = read(running, "orders", page_size=2, transport=hooked)

    assert sorted(keys("orders", records), key=int) == sorted(everything, key=int)
    assert keys("orders", records)[-1] == late


class _Hooked(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, before: Callable[[httpx.Request], None]):
        self.inner, self.before = inner, before

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.to_thread(self.before, request)
        return await self.inner.handle_async_request(request)


def test_positions_are_utc_whatever_the_store_timezone(start_shop: Start) -> None:
    running = start_shop("--orders", "5", "--timezone", "America/Los_Angeles")
    fake = running.fake()
    fake.post("/clock", json={"now": "2025-07-01 10:00:00"})
    fake.post("/customers/2/touch")
    (record,) = [r for r in read(running, "customers") if r["id"] == 2]
    assert position_of("customers", record) == Position(datetime(2025, 7, 1, 10, tzinfo=UTC), "2")
