"""The Shopify connector against the fake shop over real localhost HTTP: bulk reads equal
paged reads; bulk failures, truncated files, a job already running and access denied;
the cost budget waiting before a query instead of being throttled, THROTTLED treated as a
wait and MAX_COST_EXCEEDED as "ask for less"; abandoned checkouts (no UPDATED_AT sort)
read in sorted windows; nested connections followed up; deletions from events; the token
kept out of reprs, logs and bulk downloads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest
from pydantic import ValidationError

from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, RawRecord, SourceAuthError
from connectors.sources.shopify import ShopifyConnector
from connectors.sources.shopify.connector import position_of
from connectors.sources.shopify.paging import ORIGIN
from connectors.sources.shopify.queries import SPECS, window
from sandbox.shops.shopify.launch import RunningFakeShopify

FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
Start = Callable[..., RunningFakeShopify]


def connector(running: RunningFakeShopify, **options: Any) -> ShopifyConnector:
    options.setdefault("retry", FAST)
    options.setdefault("bulk_poll_interval", 0.02)
    options.setdefault("bulk_poll_max_interval", 0.05)
    return ShopifyConnector(running.root, running.token, **options)


def read(running: RunningFakeShopify, stream: str, *, after: Position | None = None,
         until: datetime | None = None, **options: Any) -> list[RawRecord]:
    async def records() -> list[RawRecord]:
        async with connector(running, **options) as source:
            return [r async for page in source.read(stream, after=after, until=until) for r in page]

    return asyncio.run(records())


def ids(stream: str, records: list[RawRecord]) -> list[str]:
    return [position_of(stream, r).record_id for r in records]


def ascending(stream: str, records: list[RawRecord]) -> bool:
    return all(a < b for a, b in pairwise(position_of(stream, r) for r in records))


def fake_ids(running: RunningFakeShopify, resource: str) -> set[str]:
    return {str(i) for i in running.fake().get(f"/{resource}/ids").json()["ids"]}


@pytest.mark.parametrize("stream", ["orders", "products", "customers"])
def test_a_bulk_read_equals_a_paged_read(shop: RunningFakeShopify, stream: str) -> None:
    paged = read(shop, stream, bulk_threshold=0, nested_page_size=3)  # follow-ups too
    bulk = read(shop, stream, bulk_threshold=1)
    assert ids(stream, bulk) == ids(stream, paged) and ascending(stream, bulk)
    assert bulk == paged  # the same records, nested nodes in place, whichever way they came
    stats = shop.fake().get("/stats").json()
    assert stats["downloads"] >= 1 and stats.get("downloads_with_token", 0) == 0
    if stream == "orders":
        assert max(len(o["lineItems"]["nodes"]) for o in paged) == 14  # > 3: followed up


def test_every_stream_reads_everything_once_in_position_order(shop: RunningFakeShopify) -> None:
    expected = {"orders": "orders", "customers": "customers", "products": "products",
                "categories": "collections", "vouchers": "discounts", "carts": "checkouts"}
    for stream, resource in expected.items():
        records = read(shop, stream, page_size=9, sort_window_records=10, bulk_threshold=0)
        assert sorted(ids(stream, records)) == sorted(fake_ids(shop, resource)), stream
        assert ascending(stream, records), stream
    statuses = read(shop, "statuses")
    assert {s["name"] for s in statuses} >= {"PAID", "REFUNDED", "PARTIALLY_REFUNDED"}
    assert len(read(shop, "manufacturers")) >= 2


@pytest.mark.parametrize("stream", ["orders", "carts"])
def test_a_read_resumes_after_any_position_ties_included(shop: RunningFakeShopify,
                                                         stream: str) -> None:
    options = {"page_size": 5, "sort_window_records": 8, "bulk_threshold": 20}
    records = read(shop, stream, **options)
    positions = [position_of(stream, r) for r in records]
    tied = [i for i, (a, b) in enumerate(pairwise(positions)) if a.changed_at == b.changed_at]
    assert tied, "the fake must have ties"
    for index in (tied[len(tied) // 2], 0, len(records) - 1):
        rest = read(shop, stream, after=positions[index], **options)
        assert ids(stream, rest) == ids(stream, records[index + 1:])
    until = positions[len(positions) // 2].changed_at
    bounded = read(shop, stream, until=until, **options)
    assert ids(stream, bounded) == [p.record_id for p in positions if p.changed_at <= until]


def test_failed_bulk_operations_are_split_and_incomplete_files_refused(start_shop: Start,
                                                                        caplog) -> None:
    running = start_shop()
    expected = ids("orders", read(running, "orders", bulk_threshold=0))
    running.fake().post("/bulk/faults", json={"faults": ["truncated", "timeout", "internal",
                                                         "canceled"]})
    with caplog.at_level(logging.WARNING, "shopsync.sources.shopify"):
        assert ids("orders", read(running, "orders", bulk_threshold=1)) == expected
    log = caplog.text
    assert "(TIMEOUT)" in log and "left partial data" in log and "not used" in log
    assert "objectCount says" in log and "as two halves" in log


def test_bulk_access_denied_is_an_auth_error(start_shop: Start) -> None:
    running = start_shop()
    running.fake().post("/bulk/faults", json={"faults": ["access_denied"]})
    with pytest.raises(SourceAuthError, match="ACCESS_DENIED"):
        read(running, "orders", bulk_threshold=1)


def test_a_bulk_job_already_running_is_waited_for_or_adopted(start_shop: Start) -> None:
    """The job already running ends on its third status read: our refused start, our look
    at the current job, and our first poll of it, however long each takes."""
    running = start_shop()
    fake = running.fake()
    fake.post("/bulk/occupy", json={"polls": 3})  # another run's job: waited for
    assert len(read(running, "customers", bulk_threshold=1)) == 10
    assert fake.get("/stats").json()["bulk_operations"] == 1  # ours, once the other ended
    # the same query (as when the answer to our start was lost and the start is sent again)
    until = datetime(2030, 1, 1, tzinfo=UTC)
    query = SPECS["customers"].bulk_query(window(ORIGIN, until))
    fake.post("/bulk/occupy", json={"polls": 3, "query": query})
    read(running, "customers", bulk_threshold=1, until=until)  # adopted (its file is empty)
    assert fake.get("/stats").json()["bulk_operations"] == 1  # none started


def test_the_budget_waits_before_queries_instead_of_being_throttled(start_shop: Start) -> None:
    running = start_shop("--bucket-size", "1000", "--restore-rate", "2000", "--bulk-latency", "0",
                         roomy=False)
    source = connector(running, bulk_threshold=0)

    async def go() -> list[RawRecord]:
        async with source:
            return [r async for page in source.read("orders") for r in page]

    assert len(asyncio.run(go())) == 60
    stats = running.fake().get("/stats").json()
    # the queries asked for more than the bucket holds, and none was throttled: the budget
    # kept them within it (when it waits, and how long: test_shopify_budget.py)
    assert stats["cost_requested"] > 1000
    assert stats.get("throttled", 0) == 0
    assert stats["max_cost_exceeded"] >= 1  # page size 100 was too dear: made smaller
    assert source.budget.spent == stats["cost_actual"]
    assert source.budget.requested == stats["cost_requested"]


def test_throttled_answers_are_waited_out_never_failed(start_shop: Start) -> None:
    running = start_shop("--bucket-size", "300", "--restore-rate", "30000", roomy=False)
    fake = running.fake()

    source = connector(running, bulk_threshold=0, page_size=5)

    async def go() -> tuple[int, int]:
        async with source:
            count = drains = 0
            async for page in source.read("orders"):
                count += len(page)
                # another app drains the bucket: the next query finds it empty, however late
                fake.post("/bucket", json={"available": 0})
                drains += 1
            return count, drains

    count, drains = asyncio.run(go())
    assert count == 60
    throttled = fake.get("/stats").json()["throttled"]
    assert throttled >= drains - 1  # the query after every drain but the last one
    assert source.budget.throttled == throttled  # each one waited out and asked again


def test_a_query_dearer_than_the_bucket_is_made_smaller(start_shop: Start) -> None:
    running = start_shop("--bucket-size", "150", "--restore-rate", "5000", roomy=False)
    assert len(read(running, "orders", bulk_threshold=0, page_size=50)) == 60


def test_deletions_come_from_destroy_events(start_shop: Start) -> None:
    running = start_shop()
    fake = running.fake()
    order = sorted(fake_ids(running, "orders"))[3]
    product = sorted(fake_ids(running, "products"))[1]
    fake.delete(f"/orders/{order}")
    fake.delete(f"/products/{product}")

    async def go() -> tuple[list[str], list[str], list[str], list[str]]:
        async with connector(running) as source:
            since = datetime(2026, 1, 1, tzinfo=UTC) if datetime.now(UTC).year >= 2026 else None
            return (await source.deleted_ids("orders", since=None),
                    await source.deleted_ids("products", since=since),
                    await source.deleted_ids("carts", since=None),
                    [i async for page in source.ids("orders") for i in page])

    orders, products, carts, present = asyncio.run(go())
    assert order in orders and len(orders) == 2  # one from the generated history
    assert product in products
    assert carts is None  # not logged by Shopify: compare ids() for abandoned checkouts
    assert set(present) == fake_ids(running, "orders") and order not in present


def test_bad_tokens_and_urls_are_refused_plainly(shop: RunningFakeShopify) -> None:
    async def check() -> None:
        async with ShopifyConnector(shop.root, "shpat_wrong", retry=FAST) as source:
            await source.check()

    with pytest.raises(SourceAuthError, match="401"):
        asyncio.run(check())
    with pytest.raises(ValidationError, match="must use https"):
        ShopifyConnector("http://my-shop.myshopify.com", "shpat_x")
    with pytest.raises(ValidationError, match="2025-10"):
        ShopifyConnector(shop.root, "shpat_x", api_version="latest")


def test_an_unsupported_version_is_served_by_another_with_a_warning(shop: RunningFakeShopify,
                                                                     caplog) -> None:
    with caplog.at_level(logging.WARNING, "shopsync.sources.shopify"):
        assert len(read(shop, "categories", api_version="2023-01")) == 9
    assert "serves API version 2025-01 instead of the pinned 2023-01" in caplog.text


def test_the_token_stays_out_of_reprs_logs_and_errors(shop: RunningFakeShopify, caplog) -> None:
    source = connector(shop)
    assert shop.token not in repr(source) and shop.token not in repr(source.config)
    assert shop.token not in repr(source.client._http._transport)
    with caplog.at_level(logging.DEBUG):
        read(shop, "categories")
        logging.getLogger("httpx").debug("leak? %s", shop.token)
    assert shop.token not in caplog.text
    asyncio.run(source.aclose())
