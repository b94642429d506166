"""The hosting layer every fake shop puts in front of its API, as a host, a CDN or a WAF
would: a token-bucket rate limit, faults injected at a given rate (reproducible under
``--seed``), and the count of API requests and of those the limit refused, which
``/__fake__/stats`` reports, and when the last API requests arrived (``/__fake__/arrivals``:
what a test of a shared request budget checks the spacing of); ``/__fake__/rate-limit``
drains the limit, so that a test sees it refuse the next request whatever the machine's speed.

Only the behaviour is shared here; what each answer looks like (the 429's body and headers,
each fault's page) is the platform's, in its ``guard`` module. The ``/__fake__`` API and
``/healthz`` are never limited nor faulted.
"""

from __future__ import annotations

import math
import random
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Generic, TypeVar

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.shops.settings import HostedShopSettings

K = TypeVar("K")

#: where every fake serves its own API (``sandbox.shops.control``): never limited nor faulted
FAKE_PREFIX = "/__fake__"
#: API requests whose arrival time is kept (``/__fake__/arrivals``), the latest
ARRIVALS = 10_000


class TokenBucket:
    """``rate`` tokens per second with bursts of up to ``capacity`` (default: ``rate``, at
    least one): the host's request limit, and the Shopify fake's cost bucket.

    ``clock`` is the time it refills by (tests pass their own to check the arithmetic)."""

    def __init__(self, rate: float, capacity: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate) if capacity is None else capacity
        self.tokens = self.capacity
        self.clock = clock
        self.at = clock()
        self.held = False

    def level(self) -> float:
        """The tokens there are now: refilled since the last look, unless a drain holds."""
        now = self.clock()
        if not self.held:
            self.tokens = min(self.capacity, self.tokens + max(0.0, now - self.at) * self.rate)
        self.at = now
        return self.tokens

    def meet(self) -> float:
        """The tokens a request finds (a drain holds until one has)."""
        level = self.level()
        self.held = False
        return level

    def take(self) -> float:
        """0 when the request may pass, else the seconds until a token is back."""
        if self.meet() >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def drain(self, tokens: float = 0.0) -> None:
        """Leave ``tokens`` for the next request, however late it comes (refilling resumes
        after it), as other clients spending the limit just before it would: a test then
        sees the refusal without racing the refill."""
        self.tokens, self.held = max(0.0, min(self.capacity, tokens)), True


class Faults(Generic[K]):
    """Which requests meet an injected fault, and which one: drawn from a generator seeded
    with the platform's name and the seed, so that a failing run can be replayed."""

    def __init__(self, platform: str, seed: int, rate: float, kinds: Sequence[K]) -> None:
        self.rate = rate
        self.kinds = kinds
        self.random = random.Random(f"{platform}-faults/{seed}")

    def draw(self) -> K | None:
        """The fault this request meets, or None (most of the time)."""
        if self.rate and self.random.random() < self.rate:
            return self.random.choice(self.kinds)
        return None


class Gate(ABC):
    """ASGI middleware: on the API, count the request, apply the rate limit, then maybe
    inject a fault; then ``admit`` (the platform's own authentication) on the API and on
    the fake's own routes. Other paths (``/healthz``) pass untouched.

    A platform's gate names itself (``platform``, which seeds the faults), its faults
    (``fault_kinds``) and their ``pages``, which paths are its API, and how it admits."""

    platform: ClassVar[str]
    fault_kinds: ClassVar[tuple[int, ...]]
    #: each fault's answer by status: (content type, body, headers); the 429 is also the
    #: rate limit's refusal, and a 429 or 503 says when to come back (``Retry-After``)
    pages: ClassVar[Mapping[int, tuple[str, bytes, Mapping[str, str]]]] = {}

    def __init__(self, app: ASGIApp, settings: HostedShopSettings, counters: Counter[str],
                 bucket: TokenBucket | None, arrivals: deque[float]) -> None:
        self.app = app
        self.settings = settings
        #: API requests seen and those refused by the rate limit (``/__fake__/stats``)
        self.counters = counters
        #: when the latest API requests arrived, epoch seconds (``/__fake__/arrivals``)
        self.arrivals = arrivals
        self.bucket = bucket
        self.faults = Faults(self.platform, settings.seed, settings.fault_rate, self.fault_kinds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        api = self.is_api(path)
        if scope["type"] != "http" or not (api or path.startswith(FAKE_PREFIX)):
            await self.app(scope, receive, send)
            return
        fault = None
        if api:
            self.counters["requests"] += 1
            self.arrivals.append(time.time())
            wait = self.bucket.take() if self.bucket is not None else 0.0
            if wait:
                self.counters["throttled"] += 1
                await self.throttled(send, max(1, math.ceil(wait)))
                return
            fault = self.faults.draw()
            if fault is not None and await self.fault(scope, send, fault):
                return
        await self.admit(scope, receive, send, api=api, fault=fault)

    @abstractmethod
    def is_api(self, path: str) -> bool:
        """Whether ``path`` is the platform's API (limited, faulted, counted)."""

    async def throttled(self, send: Send, seconds: int) -> None:
        """Answer the rate limit's refusal: the 429 page, saying to retry after ``seconds``."""
        await self.page(send, 429, seconds)

    async def fault(self, scope: Scope, send: Send, kind: int) -> bool:
        """Answer the injected fault ``kind`` (its page); False when it lets the request
        through (a fault that spoils a real answer rather than replacing it)."""
        await self.page(send, kind, self.settings.retry_after)
        return True

    async def page(self, send: Send, status: int, retry_after: int) -> None:
        content_type, body, headers = self.pages[status]
        if status in (429, 503):
            headers = {**headers, "Retry-After": str(retry_after)}
        await answer(send, status, body, content_type, dict(headers))

    @abstractmethod
    async def admit(self, scope: Scope, receive: Receive, send: Send, *, api: bool,
                    fault: int | None) -> None:
        """What the platform does before its routes (authentication), then the app."""


def install(app: FastAPI, gate: type[Gate], settings: HostedShopSettings) -> None:
    """Put ``gate`` in front of ``app``, its counters at ``app.state.counters``, the arrival
    times of API requests at ``app.state.arrivals`` and its rate limit's bucket (None: no
    limit: no ``--rate-limit``) at ``app.state.rate_limit``."""
    app.state.counters = Counter()
    app.state.arrivals = deque(maxlen=ARRIVALS)
    app.state.rate_limit = TokenBucket(settings.rate_limit) if settings.rate_limit else None
    app.add_middleware(gate, settings=settings, counters=app.state.counters,
                       bucket=app.state.rate_limit, arrivals=app.state.arrivals)


async def answer(send: Send, status: int, body: bytes, content_type: str,
                 headers: dict[str, str]) -> None:
    """A whole response from the middleware, before any route runs."""
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
