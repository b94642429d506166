"""What stands in front of the fake's routes: the hosting layer (``sandbox.shops.hosting``: a
token-bucket rate limit and injected WAF/proxy faults, reproducible under ``--seed``) and
WooCommerce's consumer key authentication.

Faults and the rate limit answer before WordPress runs, as a host or a CDN would: a 429 in
the WordPress JSON shape with ``Retry-After``, a 503 maintenance page, or Cloudflare-like
HTML 502 and 403 pages. The ``/__fake__`` API and ``/healthz`` are never faulted.
"""

from __future__ import annotations

import base64
import hmac
from urllib.parse import parse_qs

import orjson
from starlette.types import Receive, Scope, Send

from sandbox.shops import hosting
from sandbox.shops.woocommerce.errors import WooError, authentication_error
from sandbox.shops.woocommerce.settings import API_PREFIX, FakeWooSettings

_CLOUDFLARE_502 = (
    "<!DOCTYPE html>\n<html><head><title>example.com | 502: Bad gateway</title></head>"
    "<body><div id=\"cf-error-details\"><h1>Bad gateway</h1><span>Error code 502</span>"
    "<p>The web server reported a bad gateway error.</p>"
    "<p>Performance &amp; security by Cloudflare</p></div></body></html>\n"
)
_CLOUDFLARE_403 = (
    "<!DOCTYPE html>\n<html><head><title>Attention Required! | Cloudflare</title></head>"
    "<body><h1>Sorry, you have been blocked</h1><h2>You are unable to access example.com</h2>"
    "<p>Cloudflare Ray ID: 8f1e2d3c4b5a6978</p></body></html>\n"
)
_MAINTENANCE_503 = (
    "<!DOCTYPE html>\n<html><head><title>Maintenance</title></head><body>"
    "<p>Briefly unavailable for scheduled maintenance. Check back in a minute.</p>"
    "</body></html>\n"
)
_HTML = "text/html; charset=UTF-8"
_TOO_MANY = WooError(429, "rate_limit_exceeded",
                     "Too many requests. Please wait before trying again.")
_CLOUDFLARE = {"Server": "cloudflare"}


def credentials(scope: Scope) -> tuple[str, str] | None:
    """The consumer key and secret: query parameters first, then HTTP Basic, as
    WC_REST_Authentication::perform_basic_authentication looks for them."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    key, secret = query.get("consumer_key", [""])[-1], query.get("consumer_secret", [""])[-1]
    if key and secret:
        return key, secret
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:6].lower() == b"basic ":
            try:
                user, _, password = base64.b64decode(value[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return None
            if user and password:
                return user, password
    return None


def check_credentials(given: tuple[str, str] | None, settings: FakeWooSettings) -> bool:
    """True when authenticated, False when no credentials came; raises when they are wrong."""
    if given is None:
        return False
    key, secret = given
    if not hmac.compare_digest(key.encode(), settings.consumer_key.encode()):
        raise authentication_error("Consumer key is invalid.")
    if not hmac.compare_digest(secret.encode(), settings.consumer_secret.encode()):
        raise authentication_error("Consumer secret is invalid.")
    return True


class Gate(hosting.Gate):
    """The hosting layer on the API, then authentication on the API and the fake's own
    routes (``scope['state']['authenticated']`` tells the routes)."""

    platform = "woocommerce"
    fault_kinds = (429, 503, 502, 403)
    pages = {
        429: ("application/json; charset=UTF-8", orjson.dumps(_TOO_MANY.body()), {}),
        503: (_HTML, _MAINTENANCE_503.encode(), {}),
        502: (_HTML, _CLOUDFLARE_502.encode(), _CLOUDFLARE),
        403: (_HTML, _CLOUDFLARE_403.encode(), _CLOUDFLARE),
    }
    settings: FakeWooSettings

    def is_api(self, path: str) -> bool:
        return path.startswith(API_PREFIX)

    async def throttled(self, send: Send, seconds: int) -> None:
        assert self.bucket is not None
        await _json(send, WooError(
            429, "rate_limit_exceeded",
            f"Too many requests. Please wait {seconds} seconds before trying again.",
            headers={"Retry-After": str(seconds), "RateLimit-Limit": str(int(self.bucket.capacity)),
                     "RateLimit-Remaining": "0", "RateLimit-Reset": str(seconds)}))

    async def admit(self, scope: Scope, receive: Receive, send: Send, *, api: bool,
                    fault: int | None) -> None:
        try:
            authenticated = check_credentials(credentials(scope), self.settings)
        except WooError as exc:
            await _json(send, exc)
            return
        scope.setdefault("state", {})["authenticated"] = authenticated
        await self.app(scope, receive, send)


async def _json(send: Send, error: WooError) -> None:
    await hosting.answer(send, error.status, orjson.dumps(error.body()),
                         "application/json; charset=UTF-8", error.headers)
