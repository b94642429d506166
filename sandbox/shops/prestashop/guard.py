"""What stands in front of the webservice: the hosting layer (a token-bucket rate limit and
injected faults, reproducible under ``--seed``), then the dispatcher's key check.

Faults answer as a host, a CDN or PHP would: a 429 or 503 HTML page with ``Retry-After``, a
Cloudflare-like 502, a 500 in PrestaShop's error shape for a PHP warning (code 3), or a
200 whose JSON is preceded by a PHP notice (``display_errors`` left on). The ``/__fake__``
API and ``/healthz`` are never faulted.

The key comes from HTTP Basic (the user name; the password is ignored) or else from
``ws_key``; with neither, the dispatcher answers a plain-text 401 before PrestaShop runs.
"""

from __future__ import annotations

import base64
import math
import random
import time
from collections import Counter
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.shops.prestashop.errors import REALM, PSError, auth_error, webservice_disabled
from sandbox.shops.prestashop.render import error_content, wants_json
from sandbox.shops.prestashop.settings import (
    API_PREFIX,
    FAKE_PREFIX,
    LIMITED_KEY,
    FakePrestaSettings,
)

_PAGES = {
    429: "<!DOCTYPE html>\n<html><head><title>429 Too Many Requests</title></head><body>"
         "<h1>Too Many Requests</h1><p>You have sent too many requests in a given amount of"
         " time.</p></body></html>\n",
    503: "<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head><body>"
         "<h1>Service Unavailable</h1><p>The server is temporarily busy, try again later."
         "</p></body></html>\n",
    502: "<!DOCTYPE html>\n<html><head><title>shop.example | 502: Bad gateway</title></head>"
         "<body><div id=\"cf-error-details\"><h1>Bad gateway</h1><span>Error code 502</span>"
         "<p>Performance &amp; security by Cloudflare</p></div></body></html>\n",
}
PHP_NOTICE = (b"<br />\n<b>Notice</b>:  Undefined index: id_shop in <b>/var/www/html/classes/"
              b"webservice/WebserviceRequest.php</b> on line <b>1234</b><br />\n")
PHP_WARNING = ("[PHP Warning #2] Invalid argument supplied for foreach()"
               " (/var/www/html/classes/webservice/WebserviceOutputBuilder.php, line 512)")


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


def key_of(scope: Scope) -> str | None:
    """PHP_AUTH_USER when an Authorization: Basic header came, else ``ws_key``, else None."""
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:6].lower() == b"basic ":
            try:
                return base64.b64decode(value[6:]).decode().partition(":")[0]
            except (ValueError, UnicodeDecodeError):
                return ""
    keys = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("ws_key")
    return keys[-1] if keys else None


def check_key(key: str, settings: FakePrestaSettings) -> None:
    key = key.strip()
    if not key:
        raise auth_error(17)
    if len(key) != 32:
        raise auth_error(18)
    if key not in (settings.key, LIMITED_KEY):
        raise auth_error(20)


class Gate:
    """ASGI middleware: host-level rate limit and faults on the API, then the key check on
    the API and the fake's own routes (``scope['state']['key']`` tells the routes)."""

    def __init__(self, app: ASGIApp, settings: FakePrestaSettings,
                 counters: Counter[str] | None = None) -> None:
        self.app = app
        self.settings = settings
        #: API requests seen and those refused by the rate limit (``/__fake__/stats``)
        self.counters: Counter[str] = Counter() if counters is None else counters
        self.bucket = TokenBucket(settings.rate_limit) if settings.rate_limit else None
        self.faults = random.Random(f"prestashop-faults/{settings.seed}")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        api = path == API_PREFIX or path.startswith(API_PREFIX + "/")
        fake = path.startswith(FAKE_PREFIX)
        if scope["type"] != "http" or not (api or fake):
            await self.app(scope, receive, send)
            return
        if api:
            self.counters["requests"] += 1
        if api and self.bucket is not None:
            wait = self.bucket.take()
            if wait:
                self.counters["throttled"] += 1
                await _send(send, 429, _PAGES[429].encode(), "text/html; charset=UTF-8",
                            {"Retry-After": str(max(1, math.ceil(wait)))})
                return
        fault = None
        if api and self.settings.fault_rate and self.faults.random() < self.settings.fault_rate:
            fault = self.faults.choice((429, 503, 502, 500, 200))
            if fault != 200:
                await self._fault(scope, send, fault)
                return
        key = key_of(scope)
        if key is None:
            await _send(send, 401, b"401 Unauthorized", "text/html; charset=UTF-8",
                        {"WWW-Authenticate": REALM})
            return
        json = _json_requested(scope)
        store = scope["app"].state.store if "app" in scope else None
        try:
            if api and store is not None and not store.webservice_enabled:
                raise webservice_disabled()
            check_key(key, self.settings)
            if fake and key.strip() != self.settings.key:
                raise auth_error(21)
        except PSError as exc:
            await _send(send, exc.status, error_content([exc], json or fake),
                        "application/json" if json or fake else "text/xml;charset=utf-8",
                        {**exc.headers, "PSWS-Version": self.settings.ps_version})
            return
        scope.setdefault("state", {})["key"] = key.strip()
        await self.app(scope, receive, _with_notice(send) if fault == 200 else send)

    async def _fault(self, scope: Scope, send: Send, status: int) -> None:
        retry_after = {"Retry-After": str(self.settings.retry_after)}
        if status == 500:
            error = PSError(500, 3, PHP_WARNING)
            await _send(send, 500, error_content([error], _json_requested(scope)),
                        "application/json", {"PSWS-Version": self.settings.ps_version})
            return
        await _send(send, status, _PAGES[status].encode(), "text/html; charset=UTF-8",
                    retry_after if status in (429, 503) else {"Server": "cloudflare"})


def _json_requested(scope: Scope) -> bool:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    query = {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()}
    return wants_json(headers, query)


def _with_notice(send: Send) -> Send:
    """Prefix the body with a PHP notice, as PHP does with display_errors on."""

    prefixed = False

    async def wrapped(message: Message) -> None:
        nonlocal prefixed
        if message["type"] == "http.response.start":
            headers = [(k, str(int(v) + len(PHP_NOTICE)).encode() if k == b"content-length" else v)
                       for k, v in message.get("headers", [])]
            message = {**message, "headers": headers}
        elif message["type"] == "http.response.body" and not prefixed:
            prefixed = True
            message = {**message, "body": PHP_NOTICE + message.get("body", b"")}
        await send(message)

    return wrapped


async def _send(send: Send, status: int, body: bytes, content_type: str,
                headers: dict[str, str]) -> None:
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
