"""ASGI middleware that refuses a body before any handler sees it: one larger than
``MAX_BODY_BYTES`` (413, unread when its ``Content-Length`` says so, else as soon as the
bytes received pass the bound) and one that is not JSON (415). The answer is in the API's
error shape, and the connection stays usable."""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.marketing.errors import ApiError
from sandbox.marketing.limits import MAX_BODY_BYTES

TOO_LARGE = (f"The request body is larger than the {MAX_BODY_BYTES:,} bytes this API takes:"
             " send fewer items per request")


def is_json(content_type: str) -> bool:
    """``application/json`` or a ``+json`` type, whatever its parameters (``charset``)."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/")
                                           and media.endswith("+json"))


class BodyGuard:
    """Reads the body (up to the bound) before the app runs, then hands it on whole."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        length = headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > MAX_BODY_BYTES:
            await _refuse(send, ApiError(413, TOO_LARGE))
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY_BYTES:
                await _refuse(send, ApiError(413, TOO_LARGE))
                return
        if body and not is_json(headers.get("content-type", "")):
            given = headers.get("content-type") or "none"
            await _refuse(send, ApiError(
                415, f"The request body must be JSON, sent with Content-Type: application/json"
                     f" (got {given})"))
            return
        await self.app(scope, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body already read, then waits as the server's
    would (for the client to go away)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(send: Send, error: ApiError) -> None:
    body = orjson.dumps(error.body())
    await send({"type": "http.response.start", "status": error.status_code, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
    ]})
    await send({"type": "http.response.body", "body": body})
