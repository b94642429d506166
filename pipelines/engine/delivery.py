"""A chunk's delivery — its push, and the ledger's record of the outcomes with the stream's
cursor — running while the next chunk is read and checked.

One delivery is in flight at a time, so pushes and ledger writes keep the chunks' order and
the cursor never passes an item whose outcome is not recorded. An item the next chunk
shares with the one in flight (a carrier named by orders of both) is diffed against what
that delivery sends of it, as it will be recorded (``pending``): the same content is not
sent twice, new content is sent after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.stages import StageTimer, stage
from pipelines.engine.state import ItemStatus, Outcome

#: key -> (content hash, status): what the ledger holds, or will, of an item
LedgerStates = dict[str, tuple[str, ItemStatus]]


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


class InFlight:
    """The delivery in flight of one stream run, if any."""

    def __init__(self, stages: StageTimer | None = None) -> None:
        self.stages = stages
        self._task: asyncio.Task[None] | None = None
        #: resource -> what the delivery in flight sends or holds of it
        self._items: dict[str, LedgerStates] = {}

    def start(self, delivery: Coroutine[Any, Any, None], checked: list[Checked]) -> None:
        """Run ``delivery``, the push and record of ``checked``; the one before it must be
        done (``done``)."""
        assert self._task is None, "one delivery at a time"
        self._task = asyncio.create_task(delivery)
        self._items = {c.resource: c.expected() for c in checked}

    def pending(self, resource: str, keys: set[str]) -> LedgerStates:
        """What the delivery still in flight will record of ``keys`` of ``resource``."""
        if self._task is None or self._task.done():
            return {}  # the ledger has it
        sending = self._items.get(resource, {})
        return {key: sending[key] for key in keys & sending.keys()}

    async def done(self) -> None:
        """Wait for the delivery in flight, if any (its failure is the run's)."""
        task, self._task = self._task, None
        if task is not None:
            with stage(self.stages, "push"):
                await task

    def abandon(self) -> None:
        """A run that fails stops the delivery still in flight: its items are sent again
        by the next run, as after a crash."""
        task, self._task = self._task, None
        if task is None:
            return
        if task.done() and not task.cancelled():
            task.exception()  # seen: the run's own failure is what it reports
        task.cancel()
