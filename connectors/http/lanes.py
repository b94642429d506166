"""The clients' connection pool: lanes of one connection each, handed out first-free and
waited for in arrival order.

Why not httpcore's own pool alone: on every request and every answer it scans all its
connections, polling the socket of each idle one, and in one scan it hands the same idle
connection to every request that arrived since the last (the first to run takes it, the
others raise ``ConnectionNotAvailable`` and scan again). A burst of n requests — what the
bulk writer sends when slots free up — then costs about n² scans over dozens of
connections; at 32 in flight that cost the writer more client CPU than everything else it
does. Here each lane is an httpcore pool of one connection (its scan is one check, and the
check that the server has not closed it is still made) and lanes are handed out from a
list. How many lanes there may be can be raised while the client is open (``allow``), so
a caller that keeps n requests in flight raises it to n and nothing waits inside httpx.

The churn is httpcore's known issue (encode/httpcore#1035, open as of httpcore 1.0.9, the
latest release); pydantic's fork httpx2 fixed it (pydantic/httpx2#974, #1075). Once a
httpcore release assigns each idle connection to one request, this module can go and
``client.default_transport`` can return httpx's own transport again: ``bench/push.py``
shows whether it still pays.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import suppress

import httpx


class _Released(httpx.AsyncByteStream):
    """An answer's body that gives its lane back once closed (httpx closes every answer
    it has read, and every one that failed)."""

    def __init__(self, stream: httpx.AsyncByteStream, release: Callable[[], None]) -> None:
        self._stream = stream
        self._release: Callable[[], None] | None = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()


class LanePool(httpx.AsyncBaseTransport):
    """At most ``limit`` requests at once, each on a lane of its own (``make`` builds one:
    a transport whose pool holds one connection); the rest wait in arrival order, for as
    long as the request's pool timeout allows (then ``httpx.PoolTimeout``)."""

    def __init__(self, limit: int, make: Callable[[], httpx.AsyncBaseTransport]) -> None:
        if limit < 1:
            raise ValueError(f"a pool needs at least one lane, got {limit}")
        self.limit = limit
        self._make = make
        self._lanes: list[httpx.AsyncBaseTransport] = []
        #: the most recently freed last: its connection is the likeliest to be open
        self._free: list[httpx.AsyncBaseTransport] = []
        self._waiters: deque[asyncio.Future[httpx.AsyncBaseTransport]] = deque()
        self._closed = False

    def __repr__(self) -> str:
        return f"LanePool(limit={self.limit}, lanes={len(self._lanes)})"

    @property
    def busy(self) -> int:
        return len(self._lanes) - len(self._free)

    def allow(self, limit: int) -> None:
        """Let up to ``limit`` requests go at once (never fewer than allowed already)."""
        self.limit = max(self.limit, limit)
        while self._waiters and len(self._lanes) < self.limit:
            self._give(self._open())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        lane = await self._take(request.extensions.get("timeout", {}).get("pool"))
        try:
            response = await lane.handle_async_request(request)
        except BaseException:
            self._give(lane)
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Released(response.stream, lambda: self._give(lane))
        return response

    async def aclose(self) -> None:
        self._closed = True
        lanes, self._lanes, self._free = self._lanes, [], []
        for lane in lanes:
            await lane.aclose()

    def _open(self) -> httpx.AsyncBaseTransport:
        lane = self._make()
        self._lanes.append(lane)
        return lane

    async def _take(self, timeout: float | None) -> httpx.AsyncBaseTransport:
        if not self._waiters:
            if self._free:
                return self._free.pop()
            if len(self._lanes) < self.limit:
                return self._open()
        waiter: asyncio.Future[httpx.AsyncBaseTransport] = (
            asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        try:
            return await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except BaseException as exc:
            if waiter.done() and not waiter.cancelled():
                self._give(waiter.result())  # granted just as it gave up: pass it on
            else:
                waiter.cancel()
                with suppress(ValueError):
                    self._waiters.remove(waiter)
            if isinstance(exc, asyncio.TimeoutError):
                raise httpx.PoolTimeout(
                    f"all {self.limit} connections stayed busy for the pool timeout") from None
            raise

    def _give(self, lane: httpx.AsyncBaseTransport) -> None:
        if self._closed:
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(lane)
                return
        self._free.append(lane)
