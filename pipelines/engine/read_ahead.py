"""The pages of a run's streams, read ahead of their sync while a stream waits for its
quality suite.

The great-expectations import takes seconds of CPU, in a thread the run starts when a
chunk first has items to check (``quality.check.prepare``). That chunk would stall the run
for what is left of it; reading is mostly waiting for the shop, so instead the run reads
on — the rest of the waiting stream, then the streams after it, in the run's order — until
the suite is planned or ``limit`` records are held. A stream's sync then takes its pages from
here first.

Streams are read in the order the run syncs them, each to its end before more than the
first page of the next is read: a connector sees the same reads, only sooner. That first
page is asked for once the stream before has its own (``ReadAhead.open_after``; a read
process does the same, ``read_process.OpenedAhead``): a drop folder's waits for its whole
file, parsed and put in key order, which is then parsed beside the stream before rather
than after it. A stream's read plan is fixed when it is opened (here, or when its sync
starts).

Within a stream, each page's successor is asked for as the page is handed over
(``prefetched``): the shop's answer is waited for while the sync works on the page before it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pipelines.engine.plan import ReadPlan

#: what a stream's pages hold: records as read, or mapped (``mapped_pages.Mapped``)
R = TypeVar("R")

#: turns of the event loop the next page's request is given to go out (pacing, the pool,
#: the write) before the page it follows is handed over to be worked on
SEND_STEPS = 8

#: records a run may read ahead of its sync while it waits for a quality suite: enough to
#: last great-expectations' import at the start of a first run, whatever the chunk's size.
#: The import's thread shares the interpreter with the reading, so it lasts about twice its
#: CPU: 6.5-7.4 s for 3 CPU s on a machine where 32 000 records were read before it ended
#: and the first stream then waited 1.2-1.8 s (``bench/sync.py``, files, 300 000 orders).
#: 128 000 waited none there, at about 220 bytes a record held (peak RSS 464 -> 485 MiB;
#: at a million orders, where the peak comes later, 485 -> 483 MiB)
READ_AHEAD_RECORDS = 128_000


def read_ahead_limit(chunk_items: int) -> int:
    """The records a run may hold read ahead while it waits for a quality suite: a chunk
    (``tuning.chunk_items``) when that is more than ``READ_AHEAD_RECORDS``."""
    return max(chunk_items, READ_AHEAD_RECORDS)


@dataclass
class Reading(Generic[R]):
    """One stream's read: its plan, the pages read and not yet synced, and the rest
    (``start`` asks the connector for them at the first read)."""

    stream: str
    plan: ReadPlan
    start: Callable[[], AsyncIterator[list[R]]]
    pages: AsyncIterator[list[R]] | None = None
    held: deque[list[R]] = field(default_factory=deque)
    #: its last page has been read (``held`` may still hold pages)
    ended: bool = False
    #: seconds spent reading it while another stream waited: its own time, not theirs
    early: float = 0.0

    def open(self) -> None:
        """Ask for its first page now, unless it is being read already: the page is read
        beside the stream the run syncs (a drop folder's waits for its whole file, parsed
        and put in key order), and waits, held, until this stream's sync takes it."""
        if self.pages is None and not self.ended:
            self.pages = OpenedPages(self.start())

    async def read(self) -> list[R] | None:
        """The next page from the shop (None: there is no more)."""
        if self.ended:
            return None
        if self.pages is None:
            self.pages = prefetched(self.start())
        page = await anext(self.pages, None)
        self.ended = page is None
        return page

    async def aclose(self) -> None:
        """Stop it where it is (the run failed, or stopped, before reading it all)."""
        if self.ended:
            return
        self.ended = True
        aclose = getattr(self.pages, "aclose", None)
        if aclose is not None:
            await aclose()

    async def next(self) -> list[R] | None:
        """The stream's next page: held, else read (None: there is no more)."""
        return self.held.popleft() if self.held else await self.read()


async def unwanted(page: asyncio.Future[Any]) -> None:
    """A page asked for and not wanted (the read stopped early): cancelled unless it is in,
    and what it raised marked seen, as what stops the run is said by the run."""
    if not page.done():
        page.cancel()
        await asyncio.wait([page])
    if not page.cancelled():
        page.exception()


async def prefetched(pages: AsyncIterator[list[R]]) -> AsyncGenerator[list[R], None]:
    """``pages``, each next one asked for as this one is handed over: the shop's answer is
    waited for while the sync works on the page before it (one page ahead, no more)."""
    ahead = asyncio.ensure_future(anext(pages, None))
    try:
        while (page := await ahead) is not None:
            ahead = asyncio.ensure_future(anext(pages, None))
            for _ in range(SEND_STEPS):  # until the request is out, before the page's work
                await asyncio.sleep(0)
            yield page
    finally:  # stopped early (the run failed or ended): the page asked for is not wanted
        await unwanted(ahead)
        aclose = getattr(pages, "aclose", None)
        if aclose is not None:
            await aclose()



class OpenedPages(Generic[R]):
    """``prefetched(pages)`` with the first page asked for at once, before anyone iterates:
    a stream opened ahead (``Reading.open``, a read process's ``OpenedAhead``) is read
    beside the stream before it, and its first page waits, held, until it is taken."""

    def __init__(self, pages: AsyncIterator[list[R]]) -> None:
        self._pages = prefetched(pages)
        self._first: asyncio.Future[list[R] | None] | None = asyncio.ensure_future(
            anext(self._pages, None))

    def __aiter__(self) -> OpenedPages[R]:
        return self

    async def __anext__(self) -> list[R]:
        if self._first is None:
            return await anext(self._pages)
        first, self._first = self._first, None
        page = await first
        if page is None:
            raise StopAsyncIteration
        return page

    async def aclose(self) -> None:
        """Stop it where it is: a first page not taken is not wanted (what it raised is the
        run's to say, when it reaches the stream)."""
        if self._first is not None:
            first, self._first = self._first, None
            await unwanted(first)
        await self._pages.aclose()

class ReadAhead(Generic[R]):
    """The readings of a run's streams, in the order the run syncs them; ``open`` makes
    a stream's plan and starts reading it."""

    def __init__(self, streams: list[str], open: Callable[[str], Reading[R]],
                 limit: int) -> None:
        self._order = list(streams)
        self._open = open
        self._limit = limit
        self._readings: dict[str, Reading[R]] = {}
        #: seconds spent reading a stream while another one waited, in all
        self.lent = 0.0

    def reading(self, stream: str) -> Reading[R]:
        """The reading of ``stream``, opened now unless it was read ahead."""
        if stream not in self._readings:
            self._readings[stream] = self._open(stream)
        return self._readings[stream]

    def following(self, stream: str) -> tuple[str, ReadPlan] | None:
        """The stream the run reads after ``stream``, opened now (its plan fixed), and its
        plan; None after the last."""
        at = self._order.index(stream) + 1 if stream in self._order else len(self._order)
        if at >= len(self._order):
            return None
        reading = self.reading(self._order[at])
        return reading.stream, reading.plan

    def held(self) -> int:
        return sum(len(page) for r in self._readings.values() for page in r.held)

    async def step(self, current: str) -> bool:
        """Read one page ahead, of ``current`` or the first stream after it not read to
        its end; False when ``limit`` records are held or nothing is left to read."""
        if self.held() >= self._limit or current not in self._order:
            return False
        for stream in self._order[self._order.index(current):]:
            reading = self.reading(stream)
            if reading.ended:
                continue
            started = time.perf_counter()
            page = await reading.read()
            if stream != current:
                spent = time.perf_counter() - started
                reading.early += spent
                self.lent += spent
            if page is not None:
                reading.held.append(page)
            return True
        return False

    def open_after(self, stream: str) -> None:
        """Ask for the first page of the stream the run syncs after ``stream`` now
        (``Reading.open``): at most one stream ahead of the sync."""
        following = self.following(stream)
        if following is not None:
            self.reading(following[0]).open()

    async def aclose(self) -> None:
        """Stop what is still open (a run that failed, or stopped, before reading it all)."""
        for reading in self._readings.values():
            await reading.aclose()
