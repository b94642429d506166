"""A sync's own read-back of what it just sent, to measure the visibility lag finely."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from connectors.marketing.client import MarketingClient
from pipelines.engine.clock import Clock, wall_clock
from pipelines.engine.lag import VisibilityLag, seconds_between
from pipelines.engine.read_back import IDS_PER_READ, Reader, shown_as_sent
from pipelines.engine.reasons import why
from pipelines.engine.state import ItemStatus, StateStore

#: a probe's first read-back, seconds after the chunk was recorded, and how much longer each
#: next one waits: a lag seen at read k lies between reads k-1 and k, within a factor 1.5
PROBE_FIRST, PROBE_RATIO = 0.1, 1.5
#: items of a chunk a probe reads back: one read each time, a sample spread over the chunk
PROBE_SAMPLE = IDS_PER_READ
#: what a probe's last read may take beyond its bound before the probe is cut short
PROBE_GRACE = 2.0

log = logging.getLogger(__name__)


class VisibilityProbe:
    """Reads the items a sync has just recorded as accepted back at growing intervals
    (``PROBE_FIRST`` s after, then each ``PROBE_RATIO`` times later), for at most ``seconds``,
    so that their visibility lag is known to within that ratio instead of to the interval
    between reconciliations.

    It runs beside the sync (an asyncio task per chunk) and only observes: what it sees is
    noted as first seen (``visible_at``, a ``seen`` event), what it does not as the last
    unseen check; confirming an item stays reconciliation's. A probe that fails stops
    quietly: it is a measurement, and the sync must not depend on it.
    """

    def __init__(self, *, source: str, state: StateStore, client: MarketingClient,
                 id_data_source: int | None, seconds: float, clock: Clock = wall_clock,
                 concurrency: int = 2) -> None:
        self.source = source
        self.state = state
        self.seconds = seconds
        self.clock = clock
        self.reader = Reader(client, id_data_source, concurrency)
        self._tasks: list[asyncio.Task[None]] = []

    def watch(self, resource: str, keys: Sequence[str]) -> None:
        """Start reading ``keys`` of ``resource`` back (call it right after recording them):
        up to ``PROBE_SAMPLE`` of them, spread over the chunk."""
        if self.seconds <= 0 or not keys:
            return
        sample = list(keys[:: max(1, len(keys) // PROBE_SAMPLE)][:PROBE_SAMPLE])
        self._tasks.append(asyncio.get_running_loop().create_task(self._watch(resource, sample)))

    async def finish(self) -> None:
        """Wait for the probes to end: each stops by its own bound (``seconds``)."""
        tasks, self._tasks = self._tasks, []
        await asyncio.gather(*tasks, return_exceptions=True)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    async def _watch(self, resource: str, keys: list[str]) -> None:
        start = self.clock()
        wait = PROBE_FIRST
        try:
            async with asyncio.timeout(self.seconds + PROBE_GRACE):
                while keys and wait <= self.seconds:
                    await asyncio.sleep(seconds_between(self.clock(), start + timedelta(seconds=wait)))
                    wait *= PROBE_RATIO
                    keys = await self._look(resource, keys)
        except Exception as exc:  # noqa: BLE001 - a measurement: never the sync's failure
            log.info("visibility probe of %s %s stopped: %s", self.source, resource,
                     why(exc))

    async def _look(self, resource: str, keys: list[str]) -> list[str]:
        """Read ``keys`` back once; note what showed and what did not. Returns the keys to
        look for again."""
        entries = [e for e in self.state.ledger(self.source, resource, keys).values()
                   if e.status is ItemStatus.ACCEPTED and e.visible_at is None]
        if not entries:
            return []
        asked = self.clock()  # what the read does not show was not there by this time
        found = await self.reader.read_back(resource, entries)
        now = self.clock()  # what it shows was there by this time
        if not found.served:
            return []
        seen: dict[str, dict[str, Any]] = {}
        for entry in found.read:
            if shown_as_sent(resource, entry, found.seen) and entry.accepted_at is not None:
                lag = VisibilityLag.of(entry.accepted_at, now, entry.unseen_at)
                seen[entry.key] = {"lag": [lag.low, lag.high]}
        unseen = [e.key for e in found.read if e.key not in seen]
        self.state.note_seen(self.source, resource, seen, now)
        self.state.note_unseen(self.source, resource, unseen, asked)
        return unseen + [e.key for e in found.unread]
