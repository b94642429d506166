"""Fault injection for the API routes: slow answers and transient errors, reproducible
under ``--seed``.

A faulted request is answered before it reaches its handler, so it changes nothing: the
client sees 429 (with ``Retry-After``), 500, 502 or 503 and must try again.
"""

from __future__ import annotations

import asyncio

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.marketing.store import Store

FAULT_STATUSES = (429, 500, 502, 503)
_REASONS = {
    429: "Too many requests: slow down and retry after the time in Retry-After",
    500: "Internal server error (injected by the sandbox)",
    502: "Bad gateway (injected by the sandbox)",
    503: "Service unavailable (injected by the sandbox)",
}


class FaultInjection:
    """ASGI middleware: latency and transient faults on ``/v1/`` routes; commits the store's
    persistence after each request."""

    def __init__(self, app: ASGIApp, store: Store) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        settings = self.store.settings
        if settings.latency_ms:
            await asyncio.sleep(settings.latency_ms / 1000)
        if settings.fault_rate and self.store.fault_rng.random() < settings.fault_rate:
            status = self.store.fault_rng.choice(FAULT_STATUSES)
            await self._fault(status, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.store.persistence.commit()

    async def _fault(self, status: int, send: Send) -> None:
        body = orjson.dumps(
            {"statusCode": status, "success": False, "message": _REASONS[status],
             "errors": [_REASONS[status]]}
        )
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
        if status == 429:
            headers.append((b"retry-after", str(self.store.settings.retry_after).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
