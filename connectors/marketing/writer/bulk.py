"""The bulk writer: any number of items of one resource, pushed in batches with several
requests in flight, and one outcome per item (or per batch, for a consumer that takes a
batch's outcomes at once: ``write_batches``).

    input ──▶ batches of the resource's max ──▶ N requests in flight ──▶ outcomes
                (one being filled)              (AIMD; retries: the transport's)

Memory stays bounded whatever the input size: a batch holds its limiter slot until the
consumer has taken all its outcomes, so at most ``max_concurrency`` batches are in flight or
waiting to be consumed, plus the one being filled. A slow consumer therefore slows the
reading of the input (back-pressure) instead of piling up results.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Iterable
from contextlib import aclosing
from itertools import islice
from typing import Any, Literal

import orjson

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import RequestRejected, TransientError
from connectors.marketing.models import BulkResult
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.writer.outcomes import (
    BatchOutcome,
    ItemOutcome,
    LimitChange,
    WriteSummary,
    item_key,
)
from connectors.marketing.writer.pacing import AdaptiveLimiter, Aimd, BatchSignal

log = logging.getLogger("shopsync.writer")

#: an already mapped target item, as the API takes it (the writer never changes it), or its
#: JSON already encoded (``orjson.Fragment``), sent as it is: such an item's outcome has no
#: key (``None``), and the caller knows it by its place in the input (``BatchOutcome.start``)
Item = dict[str, Any] | orjson.Fragment
Mode = Literal["save", "update"]
#: the most requests in flight when the caller names no ceiling: a safety bound (AIMD finds
#: the pace below it), as high as the configuration allows
MAX_CONCURRENCY = 64
#: whole-request refusals that may come from one item's content (malformed, too large):
#: halving the batch isolates the culprit. Any other 4xx is about the request itself.
SPLIT_STATUSES = frozenset({400, 413, 422})


class _Fatal:
    """A failure that ends the run (it is raised to the consumer, not turned into outcomes)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()
#: what became of a batch, or of a part of it: index -> the outcome of each item not
#: accepted, and how many times each item's part was halved (empty: never)
_Settled = tuple[dict[int, ItemOutcome], tuple[int, ...]]


def _halvings(batch: list[Item], splits: int) -> tuple[int, ...]:
    """How many times each item of ``batch`` was halved: ``splits`` each, or () for none."""
    return (splits,) * len(batch) if splits else ()


async def _batches(
    items: Iterable[Item] | AsyncIterable[Item], size: int
) -> AsyncIterator[list[Item]]:
    """``items`` cut into lists of ``size`` (the last may be shorter), each read when asked
    for; a plain iterable is cut with ``islice`` rather than stepped item by item through
    an async generator, which costs more than the item's share of its request."""
    if isinstance(items, AsyncIterable):
        batch: list[Item] = []
        async for item in items:
            batch.append(item)
            if len(batch) >= size:
                yield batch
                batch = []
        if batch:
            yield batch
    else:
        iterator = iter(items)
        while batch := list(islice(iterator, size)):
            yield batch


class BulkWriter:
    """Writes items of one sync resource through ``client`` and reports what became of each.

    Args:
        client: an open :class:`MarketingClient`; its transport does the retries.
        resource: a name from ``resources.SYNC_RESOURCES`` (``"customers"``…).
        concurrency: the requests in flight at the start; AIMD moves from here.
        min_concurrency: AIMD never goes below.
        max_concurrency: AIMD never goes above: a safety bound, not a guess of the API's
            pace (default ``MAX_CONCURRENCY``, or ``concurrency`` when higher). The client's
            connection pool is raised to it, so no batch waits there for a connection.
        adaptive: False keeps ``concurrency`` fixed.
        parent_id: for nested resources, the parent the items are written under (else the
            cross-parent ``…/bulk`` route is used and items carry their parent's id).
        mode: ``"save"`` (POST: insert or update) or ``"update"`` (PUT: existing items only).
        batch_size: items per request, at most the resource's max (the default); smaller
            batches suit very large items.

    Errors that mean the configuration is wrong (``AuthenticationError``,
    ``ClientConfigError``, ``NotFoundError``, a 4xx other than 400/413/422) stop the run
    and are raised: they must not be reported as one failure per item. One writer runs one
    ``write`` at a time.
    """

    def __init__(
        self,
        client: MarketingClient,
        resource: str,
        *,
        concurrency: int = 8,
        min_concurrency: int = 1,
        max_concurrency: int | None = None,
        adaptive: bool = True,
        parent_id: str | int | None = None,
        mode: Mode = "save",
        batch_size: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if resource not in SYNC_RESOURCES:
            known = ", ".join(SYNC_RESOURCES)
            raise ValueError(f"unknown sync resource {resource!r}; known: {known}")
        self.resource = SYNC_RESOURCES[resource]
        if mode not in ("save", "update"):
            raise ValueError(f"mode must be 'save' or 'update', got {mode!r}")
        if max_concurrency is None:
            max_concurrency = max(MAX_CONCURRENCY, concurrency)
        if not 1 <= min_concurrency <= concurrency <= max_concurrency:
            raise ValueError(
                "need 1 <= min_concurrency <= concurrency <= max_concurrency, got"
                f" {min_concurrency}, {concurrency} and {max_concurrency}"
            )
        if mode == "update" and self.resource.parent_field is not None and parent_id is None:
            raise ValueError(
                f"updating {resource} needs the {self.resource.parent_field} (parent_id)"
            )
        self.batch_size = batch_size or self.resource.max_batch
        if not 1 <= self.batch_size <= self.resource.max_batch:
            raise ValueError(
                f"batch_size must be between 1 and {self.resource.max_batch} (the most"
                f" {self.resource.name} one request may carry), got {batch_size}"
            )
        self.client = client
        client.transport.allow_connections(max_concurrency)
        self.concurrency = concurrency
        self.min_concurrency = min_concurrency
        self.max_concurrency = max_concurrency
        self.adaptive = adaptive
        self.parent_id = parent_id
        self.mode = mode
        #: what batch latencies and the AIMD's cuts are timed with (tests pass their own)
        self.clock = clock
        self._send = client.bulk_save if mode == "save" else client.bulk_update
        self._reset()

    def _reset(self) -> None:
        self.limiter = AdaptiveLimiter(self.concurrency)
        self.aimd = Aimd(self.limiter, minimum=self.min_concurrency,
                         maximum=self.max_concurrency, clock=self.clock)
        self.batches = self.requests = self.splits = 0
        self._in_flight = self.peak_in_flight = 0

    @property
    def concurrency_history(self) -> list[LimitChange]:
        """How the limit moved during the last run (starts with its initial value)."""
        return list(self.aimd.history)

    async def write_all(
        self,
        items: Iterable[Item] | AsyncIterable[Item],
        on_outcome: Callable[[ItemOutcome], None] | None = None,
        on_batch: Callable[[BatchOutcome], None] | None = None,
    ) -> WriteSummary:
        """Write everything and keep only counts (``on_outcome`` sees each outcome;
        ``on_batch`` each batch's at once, with no object per accepted item)."""
        summary = WriteSummary()
        started = time.perf_counter()
        async with aclosing(self.write_batches(items)) as batches:
            async for batch in batches:
                summary.count_batch(batch)
                if on_batch is not None:
                    on_batch(batch)
                if on_outcome is not None:
                    for outcome in batch.outcomes():
                        on_outcome(outcome)
        summary.elapsed = time.perf_counter() - started
        summary.batches, summary.requests, summary.splits = self.batches, self.requests, self.splits
        summary.peak_in_flight = self.peak_in_flight
        summary.concurrency_history = self.concurrency_history
        return summary

    async def write(
        self, items: Iterable[Item] | AsyncIterable[Item]
    ) -> AsyncGenerator[ItemOutcome, None]:
        """Yield one outcome per item, batch by batch as answers come (not in input order).

        A sync iterable is read on the event loop: it should not block for long. Stopping
        early is fine; close the generator (``contextlib.aclosing``) so that the batches in
        flight are cancelled at once rather than when it is garbage-collected.
        """
        async with aclosing(self.write_batches(items)) as batches:
            async for batch in batches:
                for outcome in batch.outcomes():
                    yield outcome

    async def write_batches(
        self, items: Iterable[Item] | AsyncIterable[Item]
    ) -> AsyncGenerator[BatchOutcome, None]:
        """Yield what became of each batch, as answers come: ``write`` without an object per
        accepted item. The next batch is read once the consumer asks for the one after."""
        self._reset()
        done: asyncio.Queue[Any] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()
        producer = asyncio.create_task(self._produce(items, done, tasks))
        try:
            while True:
                entry = await done.get()
                if entry is _END:
                    break
                if isinstance(entry, _Fatal):
                    raise entry.error
                yield entry
                # only now may another batch be read: the consumer has taken this one
                self.limiter.release()
        finally:
            for task in (producer, *tasks):
                task.cancel()
            await asyncio.gather(producer, *tasks, return_exceptions=True)

    async def _produce(
        self,
        items: Iterable[Item] | AsyncIterable[Item],
        done: asyncio.Queue[Any],
        tasks: set[asyncio.Task[None]],
    ) -> None:
        async def launch(batch: list[Item], start: int) -> None:
            await self.limiter.acquire()
            task = asyncio.create_task(self._run_batch(batch, self.batches, start, done))
            self.batches += 1
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        try:
            start = 0
            async for batch in _batches(items, self.batch_size):
                await launch(batch, start)
                start += len(batch)
            while tasks:
                await asyncio.wait(set(tasks))
        except Exception as exc:  # noqa: BLE001 - the input failed: raised to the consumer
            done.put_nowait(_Fatal(exc))
        else:
            done.put_nowait(_END)

    async def _run_batch(self, batch: list[Item], number: int, start: int,
                         done: asyncio.Queue[Any]) -> None:
        try:
            refused, splits = await self._settle(batch, number, 0)
        except Exception as exc:  # noqa: BLE001 - what stops the run, raised to the consumer
            done.put_nowait(_Fatal(exc))
        else:
            done.put_nowait(BatchOutcome(self.resource, number, batch, refused, splits, start))

    async def _settle(self, batch: list[Item], number: int, splits: int) -> _Settled:
        """Send ``batch`` and read the answer, halving the batch when it is refused whole;
        raises what must stop the run."""
        stats = self.client.stats
        before = (stats.throttled, stats.server_errors + stats.network_errors)
        started = self.clock()
        self.requests += 1
        self._in_flight += 1
        in_flight = self._in_flight
        self.peak_in_flight = max(self.peak_in_flight, in_flight)
        refused: list[str] | None = None
        # until an answer says otherwise: a batch that ends the run tells nothing of the pace
        failed = True
        try:
            result = await self._send(self.resource.name, batch, parent_id=self.parent_id)
            failed = False
        except TransientError as exc:
            return self._all(batch, "failed", (str(exc),), number, splits)
        except RequestRejected as exc:
            if exc.status_code not in SPLIT_STATUSES:
                raise
            refused = [f"{exc.status_code}: {e}" for e in exc.errors]
            failed = False
        except orjson.JSONEncodeError as exc:  # raised before sending: an item is not JSON
            refused = [f"the item cannot be sent as JSON: {exc}"]
        finally:
            self._in_flight -= 1
            if self.adaptive:
                self.aimd.observe(BatchSignal(
                    started=started,
                    latency=self.clock() - started,
                    throttled=stats.throttled > before[0],
                    troubled=stats.server_errors + stats.network_errors > before[1],
                    failed=failed,
                    in_flight=in_flight,
                ))
        if refused is not None:
            if len(batch) == 1:
                return self._all(batch, "rejected", tuple(refused), number, splits)
            return await self._halved(batch, number, splits)
        return self._map(result, batch, number, splits), _halvings(batch, splits)

    async def _halved(self, batch: list[Item], number: int, splits: int) -> _Settled:
        """Each half of a batch refused whole, settled in turn."""
        self.splits += 1
        half = len(batch) // 2
        first, first_splits = await self._settle(batch[:half], number, splits + 1)
        second, second_splits = await self._settle(batch[half:], number, splits + 1)
        first.update((half + index, outcome) for index, outcome in second.items())
        return first, first_splits + second_splits

    def _all(self, batch: list[Item], status: Literal["rejected", "failed"],
             errors: tuple[str, ...], number: int, splits: int) -> _Settled:
        """One outcome for every item of ``batch``: none was accepted."""
        outcomes = {index: self._outcome(item, status, errors, number, splits)
                    for index, item in enumerate(batch)}
        return outcomes, _halvings(batch, splits)

    def _map(
        self, result: BulkResult, batch: list[Item], number: int, splits: int
    ) -> dict[int, ItemOutcome]:
        """The outcomes of the items an answered batch refused: ``rejected_items[].index``
        points into ``batch``, the list actually sent (after any splits); every other item
        was accepted, and gets no object of its own."""
        errors: dict[int, list[str]] = {}
        for rejected in result.rejected_items:
            if 0 <= rejected.index < len(batch):
                errors.setdefault(rejected.index, []).extend(
                    rejected.errors or ["rejected without a reason"]
                )
            else:
                log.warning("rejected_items names index %d of a batch of %d; ignored",
                            rejected.index, len(batch))
        if result.sent_count != len(batch) - len(errors):
            log.warning(
                "the API counted %d of %d %s accepted but listed %d rejected",
                result.sent_count, len(batch), self.resource.name, len(errors),
            )
        return {index: self._outcome(batch[index], "rejected", tuple(reasons), number, splits)
                for index, reasons in errors.items()}

    def _outcome(
        self, item: Item, status: Literal["rejected", "failed"], errors: tuple[str, ...],
        number: int, splits: int,
    ) -> ItemOutcome:
        return ItemOutcome(
            item_key(self.resource, item), status, errors, item, batch=number, splits=splits
        )
