"""The push-only rate of a sync's items: what the sync could reach if reading, mapping,
checking and recording cost nothing (``bench/sync.py``; issue 15's P2 asks the sync for half
of it).

The items are the ones the sync pushed and the ledger holds as accepted, with the payloads
it sent. They are sent again, to the same sandbox, through the engine's own ``send`` (the
bulk writer with the source's tuning), a chunk at a time in the sync's chunk size. A chunk's
ledger page is read and its items encoded off the clock (as a read process encodes them
beside the sync), so the time is the pushes' alone, and so is the CPU it counts (this
thread's, while it sends). The collector is paced as in a sync (``paced_for_sync``): at
Python's default pace, beside a heap the size a sync leaves, it collected it all every
second or so, for 150-190 ms each time.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from pipelines.engine.collector import paced_for_sync
from pipelines.engine.send import send
from pipelines.engine.state import ItemStatus, Outcome


async def push_only(runner: Any, resources: list[str]) -> tuple[int, float, float]:
    """Items of ``resources`` the ledger holds as accepted, sent again by ``runner``'s
    client: (how many, seconds of pushing, CPU seconds of this thread pushing)."""
    with paced_for_sync():
        async with runner.open_client() as client:
            return await _sent_again(runner, client, resources)


async def _sent_again(runner: Any, client: Any, resources: list[str]
                      ) -> tuple[int, float, float]:
    source, tuning = runner.source, runner.source.tuning
    items, seconds, cpu = 0, 0.0, 0.0
    for resource in resources:
        after = None
        while page := runner.state.entries(source.name, resource, {ItemStatus.ACCEPTED},
                                           limit=tuning.chunk_items, after_key=after):
            after = page[-1].key
            pending = {e.key: Outcome(e.key, e.content_hash, ItemStatus.ACCEPTED,
                                      e.source_record_id, (),
                                      orjson.Fragment(orjson.dumps(e.payload)))
                       for e in page if e.payload is not None}
            started, spent = time.perf_counter(), time.thread_time()
            await send(client, resource, pending, concurrency=tuning.concurrency,
                       min_concurrency=tuning.min_concurrency,
                       max_concurrency=tuning.max_concurrency)
            seconds += time.perf_counter() - started
            cpu += time.thread_time() - spent
            items += len(pending)
    return items, seconds, cpu
