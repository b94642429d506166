"""What stands in front of the webservice: the hosting layer (``sandbox.shops.hosting``: a
token-bucket rate limit and injected faults, reproducible under ``--seed``), then the
dispatcher's key check.

Faults answer as a host, a CDN or PHP would: a 429 or 503 HTML page with ``Retry-After``, a
Cloudflare-like 502, a 500 in PrestaShop's error shape for a PHP warning (code 3), or a
200 whose JSON is preceded by a PHP notice (``display_errors`` left on). The ``/__fake__``
API and ``/healthz`` are never faulted.

The key comes from HTTP Basic (the user name; the password is ignored) or else from
``ws_key``; with neither, the dispatcher answers a plain-text 401 before PrestaShop runs.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qs

from starlette.types import Message, Receive, Scope, Send

from sandbox.shops import hosting
from sandbox.shops.prestashop.errors import REALM, PSError, auth_error, webservice_disabled
from sandbox.shops.prestashop.render import error_content, wants_json
from sandbox.shops.prestashop.settings import API_PREFIX, LIMITED_KEY, FakePrestaSettings

_HTML = "text/html; charset=UTF-8"
_PAGES: dict[int, tuple[str, bytes, dict[str, str]]] = {
    429: (_HTML, b"<!DOCTYPE html>\n<html><head><title>429 Too Many Requests</title></head><body>"
                 b"<h1>Too Many Requests</h1><p>You have sent too many requests in a given amount"
                 b" of time.</p></body></html>\n", {}),
    503: (_HTML, b"<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head>"
                 b"<body><h1>Service Unavailable</h1><p>The server is temporarily busy, try again"
                 b" later.</p></body></html>\n", {}),
    502: (_HTML, b"<!DOCTYPE html>\n<html><head><title>shop.example | 502: Bad gateway</title>"
                 b"</head><body><div id=\"cf-error-details\"><h1>Bad gateway</h1><span>Error code"
                 b" 502</span><p>Performance &amp; security by Cloudflare</p></div></body>"
                 b"</html>\n", {"Server": "cloudflare"}),
}
PHP_NOTICE = (b"<br />\n<b>Notice</b>:  Undefined index: id_shop in <b>/var/www/html/classes/"
              b"webservice/WebserviceRequest.php</b> on line <b>1234</b><br />\n")
PHP_WARNING = ("[PHP Warning #2] Invalid argument supplied for foreach()"
               " (/var/www/html/classes/webservice/WebserviceOutputBuilder.php, line 512)")


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


class Gate(hosting.Gate):
    """The hosting layer on the API, then the key check on the API and the fake's own
    routes (``scope['state']['key']`` tells the routes)."""

    platform = "prestashop"
    #: 200: the answer comes, preceded by a PHP notice
    fault_kinds = (429, 503, 502, 500, 200)
    pages = _PAGES
    settings: FakePrestaSettings

    def is_api(self, path: str) -> bool:
        return path == API_PREFIX or path.startswith(API_PREFIX + "/")

    async def fault(self, scope: Scope, send: Send, kind: int) -> bool:
        if kind == 200:
            return False
        if kind == 500:
            error = PSError(500, 3, PHP_WARNING)
            await hosting.answer(send, 500, error_content([error], _json_requested(scope)),
                                 "application/json", {"PSWS-Version": self.settings.ps_version})
            return True
        return await super().fault(scope, send, kind)

    async def admit(self, scope: Scope, receive: Receive, send: Send, *, api: bool,
                    fault: int | None) -> None:
        key = key_of(scope)
        if key is None:
            await hosting.answer(send, 401, b"401 Unauthorized", "text/html; charset=UTF-8",
                                 {"WWW-Authenticate": REALM})
            return
        fake = not api
        json = _json_requested(scope)
        store = scope["app"].state.store if "app" in scope else None
        try:
            if api and store is not None and not store.webservice_enabled:
                raise webservice_disabled()
            check_key(key, self.settings)
            if fake and key.strip() != self.settings.key:
                raise auth_error(21)
        except PSError as exc:
            await hosting.answer(send, exc.status, error_content([exc], json or fake),
                                 "application/json" if json or fake else "text/xml;charset=utf-8",
                                 {**exc.headers, "PSWS-Version": self.settings.ps_version})
            return
        scope.setdefault("state", {})["key"] = key.strip()
        await self.app(scope, receive, _with_notice(send) if fault == 200 else send)


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
