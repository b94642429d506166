"""A chunk's delivery — its push, and the ledger's record of the outcomes with the stream's
cursor — running while the next chunk is read and checked.

A delivery is two steps: the push, then the record. One chunk is pushed at a time and one
recorded at a time, each in the chunks' order, and a chunk's push runs beside the record
of the chunk before it (the record mostly waits on the database, in a worker thread). So
pushes and ledger writes keep the chunks' order and the cursor never passes an item whose
outcome is not recorded. An item the next chunk shares with a delivery in flight (a
carrier named by orders of both) is diffed against what that delivery sends of it, as it
will be recorded (``pending``): the same content is not sent twice, new content is sent
after it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.stages import StageTimer, stage
from pipelines.engine.state import ItemStatus, Outcome

#: key -> (content hash, status): what the ledger holds, or will, of an item
LedgerStates = dict[str, tuple[str, ItemStatus]]

#: how many deliveries may be in flight: one pushing, and the one before it recording
DEPTH = 2


@dataclass
class Checked:
    """One resource of a chunk, checked: the outcomes of the items held back, and the
    items to send with their content hashes."""

    resource: str
    held: list[Outcome]
    to_send: list[MappedItem]
    hashes: dict[str, str]

    def expected(self) -> LedgerStates:
        """What the ledger will hold of its items once they are sent."""
        held = {o.key: (o.content_hash, ItemStatus(o.status)) for o in self.held}
        return held | {m.key: (self.hashes[m.key], ItemStatus.ACCEPTED) for m in self.to_send}


@dataclass
class Pushed:
    """What a chunk's push did: each resource pushed, in order, with its outcomes; and the
    failure that stopped it before the rest, if one did (what was pushed before it is
    still recorded, then the failure is the run's)."""

    outcomes: list[tuple[str, list[Outcome]]]
    failure: Exception | None = None


@dataclass
class _Delivery:
    push: asyncio.Task[Pushed]
    whole: asyncio.Task[None]
    #: resource -> what it sends or holds of it
    items: dict[str, LedgerStates]


class InFlight:
    """The deliveries in flight of one stream run: at most one pushing, and the one
    before it recording."""

    def __init__(self, stages: StageTimer | None = None) -> None:
        self.stages = stages
        self._deliveries: deque[_Delivery] = deque()

    def start(self, push: Coroutine[Any, Any, Pushed],
              record: Callable[[Pushed], Coroutine[Any, Any, None]],
              checked: list[Checked]) -> None:
        """Push ``checked`` (``push``), then record what it did (``record``) once the
        delivery before it is recorded; the one before must be pushed (``ready``)."""
        assert len(self._deliveries) < DEPTH, "one delivery pushing at a time"
        before = self._deliveries[-1].whole if self._deliveries else None
        pushing = asyncio.create_task(push)

        async def deliver() -> None:
            pushed = await pushing
            if before is not None:
                await before  # recorded in the chunks' order (its failure is the run's)
            await record(pushed)

        self._deliveries.append(_Delivery(pushing, asyncio.create_task(deliver()),
                                          {c.resource: c.expected() for c in checked}))

    def pending(self, resource: str, keys: set[str]) -> LedgerStates:
        """What the deliveries still in flight will record of ``keys`` of ``resource``,
        the latest last."""
        found: LedgerStates = {}
        for delivery in self._deliveries:
            if not delivery.whole.done():  # else the ledger has it
                sending = delivery.items.get(resource, {})
                found.update((key, sending[key]) for key in keys & sending.keys())
        return found

    async def ready(self) -> None:
        """Wait until another delivery may start: the last one pushed, and every one
        before it recorded. A push that failed is waited for to its end: it records what
        it pushed, then fails the run, before another chunk is sent."""
        with stage(self.stages, "push"):
            while self._deliveries:
                last = self._deliveries[-1]
                if len(self._deliveries) > 1:
                    await self._deliveries.popleft().whole
                elif (await last.push).failure is not None or last.whole.done():
                    await last.whole
                    self._deliveries.popleft()
                else:
                    return

    async def done(self) -> None:
        """Wait for every delivery in flight (a failure is the run's)."""
        with stage(self.stages, "push"):
            while self._deliveries:
                await self._deliveries.popleft().whole

    def abandon(self) -> None:
        """A run that fails stops the deliveries still in flight: their items are sent
        again by the next run, as after a crash."""
        while self._deliveries:
            delivery = self._deliveries.popleft()
            for task in (delivery.push, delivery.whole):
                if task.done() and not task.cancelled():
                    task.exception()  # seen: the run's own failure is what it reports
                task.cancel()
