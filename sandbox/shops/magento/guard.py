"""What stands in front of the fake's routes: the hosting layer (a token-bucket rate limit and
injected CDN/WAF faults, reproducible under ``--seed``) and Magento's bearer-token check.

Magento Open Source has no per-request rate limit of its own; what throttles an API client is
the CDN or WAF in front of it (Fastly on Adobe Commerce Cloud, Cloudflare): a 429 with
``Retry-After``, a Fastly 503, an HTML 502 or 504, a Cloudflare 403 block page. The
``/__fake__`` API and ``/healthz`` are never faulted nor limited.
"""

from __future__ import annotations

import math
import random
import time

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.shops.magento.settings import FAKE_PREFIX, REST_PREFIX, FakeMagentoSettings

_PAGES = {
    502: ("text/html; charset=UTF-8",
          ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>"
          "<center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n")),
    503: ("text/html; charset=UTF-8",
          ("<!DOCTYPE html>\n<html><head><title>503 Backend is unhealthy</title></head><body>"
          "<h1>Error 503 Backend is unhealthy</h1><p>Backend is unhealthy</p>"
          "<h3>Guru Mediation:</h3><p>Details: cache-fra-etou8220144-FRA 1719830000</p>"
          "<hr><p>Varnish cache server</p></body></html>\n")),
    504: ("text/html; charset=UTF-8",
          ("<!DOCTYPE html>\n<html><head><title>504 Gateway Time-out</title></head><body>"
          "<center><h1>504 Gateway Time-out</h1></center></body></html>\n")),
    403: ("text/html; charset=UTF-8",
          ("<!DOCTYPE html>\n<html><head><title>Attention Required! | Cloudflare</title></head>"
          "<body><h1>Sorry, you have been blocked</h1><p>Cloudflare Ray ID: 8f1e2d3c4b5a6978</p>"
          "</body></html>\n")),
}


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


def bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].decode("latin-1").strip()
    return None


class Gate:
    """ASGI middleware: rate limit and faults on the REST API; the token is read here and
    checked by the routes (each answers 401 naming its own ACL resource)."""

    def __init__(self, app: ASGIApp, settings: FakeMagentoSettings, stats: dict[str, int]) -> None:
        self.app = app
        self.settings = settings
        self.bucket = TokenBucket(settings.rate_limit) if settings.rate_limit else None
        self.faults = random.Random(f"magento-faults/{settings.seed}")
        self.stats = stats  # requests and throttled answers, for /__fake__/stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        rest = path.startswith((REST_PREFIX, "/index.php" + REST_PREFIX))
        if scope["type"] != "http" or not (rest or path.startswith(FAKE_PREFIX)):
            await self.app(scope, receive, send)
            return
        if rest:
            self.stats["requests"] += 1
            if self.bucket is not None:
                wait = self.bucket.take()
                if wait:
                    self.stats["throttled"] += 1
                    seconds = max(1, math.ceil(wait))
                    body = orjson.dumps({"message": "Too many requests. Try again later."})
                    await _send(send, 429, body, "application/json; charset=utf-8",
                                {"Retry-After": str(seconds)})
                    return
            if self.settings.fault_rate and self.faults.random() < self.settings.fault_rate:
                await self._fault(send, self.faults.choice((429, 503, 502, 504, 403)))
                return
        scope.setdefault("state", {})["token"] = bearer(scope)
        await self.app(scope, receive, send)

    async def _fault(self, send: Send, status: int) -> None:
        retry_after = {"Retry-After": str(self.settings.retry_after)}
        if status == 429:
            await _send(send, 429, orjson.dumps({"message": "Too many requests. Try again later."}),
                        "application/json; charset=utf-8", retry_after)
            return
        content_type, body = _PAGES[status]
        headers = retry_after if status == 503 else {}
        if status == 403:
            headers = {"Server": "cloudflare"}
        await _send(send, status, body.encode(), content_type, headers)


async def _send(send: Send, status: int, body: bytes, content_type: str,
                headers: dict[str, str]) -> None:
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
