"""The hosting layer every fake shop puts in front of its API, as a host, a CDN or a WAF
would: a token-bucket rate limit, faults injected at a given rate (reproducible under
``--seed``), and the count of API requests and of those the limit refused, which
``/__fake__/stats`` reports.

Only the behaviour is shared here; what each answer looks like (the 429's body and headers,
each fault's page) is the platform's, in its ``guard`` module. The ``/__fake__`` API and
``/healthz`` are never limited nor faulted.
"""

from __future__ import annotations

import math
import random
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from typing import ClassVar, Generic, Protocol, TypeVar

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

K = TypeVar("K")


class HostingSettings(Protocol):
    """The settings the hosting layer reads (every fake's settings have them)."""

    seed: int
    #: requests per second allowed by a token bucket (burst = the same number); None = off
    rate_limit: float | None
    #: the share of API requests that meet an injected fault
    fault_rate: float
    #: the ``Retry-After`` of an injected 429 or 503
    retry_after: int


class TokenBucket:
    """``rate`` requests per second with bursts of up to ``rate`` (at least one)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)
        self.tokens = self.capacity
        self.at = time.monotonic()

    def take(self) -> float:
        """0 when the request may pass, else the seconds until a token is back."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


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
    (``fault_kinds``), which paths are its API, and how it answers each refusal."""

    platform: ClassVar[str]
    fault_kinds: ClassVar[tuple[int, ...]]
    fake_prefix: ClassVar[str] = "/__fake__"

    def __init__(self, app: ASGIApp, settings: HostingSettings,
                 counters: Counter[str] | None = None) -> None:
        self.app = app
        self.settings = settings
        #: API requests seen and those refused by the rate limit (``/__fake__/stats``)
        self.counters: Counter[str] = Counter() if counters is None else counters
        self.bucket = TokenBucket(settings.rate_limit) if settings.rate_limit else None
        self.faults = Faults(self.platform, settings.seed, settings.fault_rate, self.fault_kinds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        api = self.is_api(path)
        if scope["type"] != "http" or not (api or path.startswith(self.fake_prefix)):
            await self.app(scope, receive, send)
            return
        fault = None
        if api:
            self.counters["requests"] += 1
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

    @abstractmethod
    async def throttled(self, send: Send, seconds: int) -> None:
        """Answer the rate limit's refusal: a 429 saying to retry after ``seconds``."""

    @abstractmethod
    async def fault(self, scope: Scope, send: Send, kind: int) -> bool:
        """Answer the injected fault ``kind``; False when it lets the request through
        (a fault that spoils a real answer rather than replacing it)."""

    @abstractmethod
    async def admit(self, scope: Scope, receive: Receive, send: Send, *, api: bool,
                    fault: int | None) -> None:
        """What the platform does before its routes (authentication), then the app."""


def install(app: FastAPI, gate: type[Gate], settings: HostingSettings) -> None:
    """Put ``gate`` in front of ``app``, its counters at ``app.state.counters``."""
    app.state.counters = Counter()
    app.add_middleware(gate, settings=settings, counters=app.state.counters)


def request_stats(counters: Counter[str]) -> dict[str, int]:
    """What ``/__fake__/stats`` reports of the hosting layer."""
    return {"requests": counters["requests"], "throttled": counters["throttled"]}


async def answer(send: Send, status: int, body: bytes, content_type: str,
                 headers: dict[str, str]) -> None:
    """A whole response from the middleware, before any route runs."""
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
