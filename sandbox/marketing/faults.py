"""Fault injection for the API routes: slow answers, transient errors and dropped
connections, reproducible under ``--seed``.

A faulted request is answered before it reaches its handler, so it changes nothing: the
client sees 429 (with ``Retry-After``), 500, 502 or 503 and must try again.

A dropped connection gets the start of an answer and then no body: uvicorn closes the
connection and the client sees a protocol error (httpx: ``RemoteProtocolError``). Half the
drops, at random, happen before the handler runs (nothing changed) and half after it (the
write was applied but the client cannot know): the ambiguous case a retrying client must
survive, which saves being insert-or-update by id makes harmless.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.marketing.store import Store

FAULT_STATUSES = (429, 500, 502, 503)
_REASONS = {
    429: "Too many requests: slow down and retry after the time in Retry-After",
    500: "Internal server error (injected by the sandbox)",
    502: "Bad gateway (injected by the sandbox)",
    503: "Service unavailable (injected by the sandbox)",
}
#: what uvicorn logs, as an error, when an app ends an answer early: a drop is meant
_UVICORN_ON_DROP = "ASGI callable returned without completing response."
#: announced but never sent, so that the client waits for a body that does not come
_CUT_START: Message = {
    "type": "http.response.start", "status": 200,
    "headers": [(b"content-type", b"application/json"), (b"content-length", b"64")],
}


def _not_a_drop(record: logging.LogRecord) -> bool:
    """Keeps uvicorn quiet about intended drops: one error line each would bury real errors
    and, when nobody reads the sandbox's output (tests), fill its pipe until it blocks."""
    return record.msg != _UVICORN_ON_DROP


async def _swallow(message: Message) -> None:
    """The ``send`` of a handler whose answer is lost with its connection."""


async def _read_to_the_end(receive: Receive) -> None:
    """Closing with request bytes unread makes the kernel reset the connection, which the
    client may see before the cut answer (a ``ReadError``): read them so that every drop
    looks the same."""
    while (await receive()).get("more_body", False):
        pass


class FaultInjection:
    """ASGI middleware: latency, transient faults and dropped connections on ``/v1/``
    routes; commits the store's persistence before each request's answer is sent."""

    def __init__(self, app: ASGIApp, store: Store) -> None:
        self.app = app
        self.store = store
        if store.settings.disconnect_rate:
            logging.getLogger("uvicorn.error").addFilter(_not_a_drop)

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
        drop_after: bool | None = None
        if settings.disconnect_rate and self.store.fault_rng.random() < settings.disconnect_rate:
            drop_after = self.store.fault_rng.random() < 0.5
            if not drop_after:
                await _read_to_the_end(receive)
                await send(_CUT_START)
                return
        answer = send if drop_after is None else _swallow

        async def committed_first(message: Message) -> None:
            # what the request changed is on disk before its answer leaves: a process killed
            # right after a client saw "accepted" still has what it accepted
            if message["type"] == "http.response.start":
                self.store.persistence.commit()
            await answer(message)

        try:
            await self.app(scope, receive, committed_first)
        finally:
            self.store.persistence.commit()
        if drop_after:
            await send(_CUT_START)

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
