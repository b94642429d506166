"""The same cases against every platform's fake: a connector must read everything exactly
once, in position order, whatever the platform throws at it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, SourceAuthError, SourceConnector, id_order
from pipelines.engine.deletions import present_ids, reported_deletions

FAST_RETRIES = RetryPolicy(max_attempts=10, initial_backoff=0.01, max_backoff=0.2, jitter=0.01)


async def read_all(connector, stream, after=None, mid_read: Callable[[], None] | None = None):
    """Every record and its position; ``mid_read`` is called once, after the first page."""
    try:
        records = []
        async for page in connector.read(stream, after=after):
            if mid_read is not None and not records:
                mid_read()
            records.extend(page)
        return records, [connector.position(stream, r) for r in records]
    finally:
        await connector.aclose()


def ids_of(positions):
    return [p.record_id for p in positions]


@pytest.fixture
def started():
    handles = []

    def _start(driver, **kwargs):
        handle = driver.start(**kwargs)
        handles.append(handle)
        return handle

    yield _start
    for handle in handles:
        handle.stop()


def test_a_full_read_returns_every_record_once_in_position_order(driver, started):
    shop = started(driver)
    _, positions = asyncio.run(read_all(shop.connector(), driver.stream))

    assert sorted(ids_of(positions)) == sorted(shop.ids())
    assert len(set(ids_of(positions))) == len(positions)
    assert all(a.key() <= b.key() for a, b in pairwise(positions))


def test_reading_after_a_position_returns_exactly_the_rest(driver, started):
    shop = started(driver)
    _, positions = asyncio.run(read_all(shop.connector(), driver.stream))
    middle = positions[len(positions) // 2]

    _, rest = asyncio.run(read_all(shop.connector(), driver.stream, after=middle))

    assert ids_of(rest) == [p.record_id for p in positions if middle < p]


def test_a_cursor_in_the_future_reads_nothing_and_fails_nothing(driver, started):
    shop = started(driver)
    future = Position(datetime.now(UTC) + timedelta(days=365), "999999999")
    records, _ = asyncio.run(read_all(shop.connector(), driver.stream, after=future))
    assert records == []


def test_records_sharing_a_timestamp_across_page_boundaries_are_read_once(driver, started):
    shop = started(driver, page_size=5)
    _, positions = asyncio.run(read_all(shop.connector(), driver.stream))

    times = [p.changed_at for p in positions]
    assert len(set(times)) < len(times), "the fake must have ties for this case to mean anything"
    assert sorted(ids_of(positions)) == sorted(shop.ids())


@pytest.mark.case("throttling")
def test_throttling_slows_the_read_but_loses_nothing(driver, started):
    shop = started(driver, rate_limit=20, size=60)
    # the limit is spent mid-read (as other clients would): the next request is refused
    _, positions = asyncio.run(read_all(shop.connector(), driver.stream, mid_read=shop.drain))

    assert shop.throttled() >= 1
    assert sorted(ids_of(positions)) == sorted(shop.ids())
    assert len(set(ids_of(positions))) == len(positions)


@pytest.mark.case("pacing")
def test_reads_paced_to_the_hosts_limit_are_never_throttled(driver, started):
    """The limit refills 20 a second after a burst of 20; that a read paced at the rate never
    meets a refusal is the arithmetic of tests/connectors/test_pacing.py. Here the server
    counts: more requests than the burst, none refused."""
    shop = started(driver, rate_limit=20, size=120, page_size=5)
    _, paced = asyncio.run(read_all(shop.connector(requests_per_second=20), driver.stream))

    assert sorted(ids_of(paced)) == sorted(shop.ids())
    assert shop.requests() > 20  # past the burst: the pace, not the burst, let them all in
    assert shop.throttled() == 0


@pytest.mark.case("server_errors")
def test_server_errors_mid_stream_are_retried(driver, started):
    shop = started(driver, fault_rate=0.2, size=60)
    _, positions = asyncio.run(read_all(shop.connector(retry=FAST_RETRIES), driver.stream))
    assert sorted(ids_of(positions)) == sorted(shop.ids())


@pytest.mark.case("bad_credentials")
def test_bad_credentials_are_refused_plainly(driver, started):
    shop = started(driver)

    async def check():
        connector = shop.connector(bad_credentials=True)
        try:
            await connector.check()
        finally:
            await connector.aclose()

    with pytest.raises(SourceAuthError):
        asyncio.run(check())


async def learned_gone(connector: SourceConnector, stream: str, before: set[str]) -> set[str]:
    """Which of ``before`` the engine learns are gone, its way (pipelines/engine): a stream
    read in full by what it no longer returns; an incremental one from the platform's
    deletion log, else from its id set. A connector offering neither for an incremental
    stream hides every deletion: that fails here."""
    try:
        if not connector.streams()[stream].incremental:
            return before - {connector.position(stream, r).record_id
                             async for page in connector.read(stream) for r in page}
        reported = await reported_deletions(connector, stream, since=None)
        if reported is not None:
            return before & reported
        present = await present_ids(connector, stream)
        assert present is not None, (
            f"{stream}: read incrementally, and the connector neither reports deletions"
            " (deleted_ids) nor lists ids (ids): what is deleted at the source would stay at"
            " the destination forever")
        return before - present
    finally:
        await connector.aclose()


@pytest.mark.case("deletions")
def test_records_deleted_at_the_source_are_reported_as_gone(driver, started):
    """For every stream whose records can be deleted at the source: one deleted for good is
    learnt gone — it and nothing else — by the means the engine uses to delete its items at
    the destination (pipelines/engine/deletions.py)."""
    shop = started(driver, size=30)
    assert shop.deletable, (f"{driver.platform}: name the streams whose records can be"
                            " deleted at the source (the handle's ``deletable``)")
    for stream in shop.deletable:
        _, positions = asyncio.run(read_all(shop.connector(), stream))
        before = set(ids_of(positions))
        assert before, f"{stream}: the fake must hold records for this case to mean anything"
        victim = sorted(before, key=id_order)[len(before) // 2]

        shop.delete(stream, victim)

        assert asyncio.run(learned_gone(shop.connector(), stream, before)) == {victim}, stream


def test_an_empty_shop_reads_as_nothing(driver, started):
    shop = started(driver, empty=True)
    records, _ = asyncio.run(read_all(shop.connector(), driver.stream))
    assert records == []
