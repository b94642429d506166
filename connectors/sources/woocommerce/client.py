"""The WooCommerce REST API v3 over HTTP: one authenticated, retried GET at a time.

Retried, through the project's one policy (connectors/http/retry.py): 408, 429 and 5xx, plus
two answers that come from what stands in front of WordPress rather than from WooCommerce —
a 403 whose body is not a WordPress error (a WAF or bot filter such as Cloudflare's
challenge page) and a 200 whose body is not JSON (a security or caching plugin's HTML).
A 403 in the WordPress shape is a real refusal and is not retried.

The consumer key and secret are added to a copy of each request inside the transport, so
neither httpx's request log nor an exception ever holds them; redirects are not followed,
so they never reach another origin. With query-string auth WordPress echoes them back in
the ``Link`` header, which httpcore logs at DEBUG: a filter on the httpx/httpcore loggers
blanks them out of those records.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from pydantic import SecretStr

from connectors.http.pacing import Pacer
from connectors.http.redact import hide, unhide, wire_forms
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, TransientHTTPError, async_retrying
from connectors.http.tls import tls_context
from connectors.sources.base import SourceAuthError, SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.woocommerce.config import WooCommerceConfig

log = logging.getLogger("shopsync.sources.woocommerce")
USER_AGENT = "shopsync/0.1 (WooCommerce source connector)"


class WooCommerceApiError(SourceError):
    """WooCommerce (or WordPress) refused a request; ``code`` is its error code."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class WooPage:
    """One answer: the decoded body and, for collections, the pagination headers."""

    data: Any
    total: int | None = None
    total_pages: int | None = None

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.data if isinstance(self.data, list) else []


class _Credentials(httpx.AsyncBaseTransport):
    """Signs a copy of each request (Basic header or query parameters) just before sending."""

    def __init__(self, inner: httpx.AsyncBaseTransport, key: SecretStr, secret: SecretStr,
                 in_query: bool) -> None:
        self._inner = inner
        self._key = key
        self._secret = secret
        self._in_query = in_query

    def __repr__(self) -> str:
        return f"{type(self).__name__}(in_query={self._in_query})"

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        key, secret = self._key.get_secret_value(), self._secret.get_secret_value()
        url, headers = request.url, request.headers.copy()
        if self._in_query:
            url = url.copy_merge_params({"consumer_key": key, "consumer_secret": secret})
        else:
            token = base64.b64encode(f"{key}:{secret}".encode()).decode()
            headers["authorization"] = f"Basic {token}"
        signed = httpx.Request(request.method, url, headers=headers, stream=request.stream,
                               extensions=request.extensions)
        return await self._inner.handle_async_request(signed)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _wp_error(response: httpx.Response) -> dict[str, Any] | None:
    """The ``{code, message, data}`` body of a WordPress error, or None (HTML, empty…)."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and "code" in body and "message" in body else None


class WooClient:
    def __init__(
        self,
        config: WooCommerceConfig,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = config.base_url
        self.retry = retry or RetryPolicy()
        self.pacer = Pacer(config.requests_per_second)
        self._hidden = wire_forms(config.consumer_key, config.consumer_secret)
        hide(self._hidden)
        inner = transport or httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=16))
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            transport=_Credentials(inner, config.consumer_key, config.consumer_secret,
                                   config.query_string_auth),
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            follow_redirects=False,
            headers={"accept": "application/json", "user-agent": USER_AGENT},
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()
        unhide(self._hidden)
        self._hidden = []

    async def get(self, path: str, params: dict[str, Any] | None = None) -> WooPage:
        """GET ``path`` (relative to ``…/wp-json/wc/v3``) and decode it.

        Raises:
            SourceAuthError: the key was refused (401) or may not read this resource (403).
            WooCommerceApiError: any other refusal, or a transient one that outlived retries.
        """
        try:
            async for attempt in async_retrying(self.retry, idempotent=True):
                with attempt:
                    await self.pacer.wait()
                    response, data = await self._send(path, params)
        except TransientHTTPError as exc:
            raise self._gave_up(path, exc.response) from None
        except httpx.TransportError as exc:
            raise WooCommerceApiError(
                f"GET {path}: network error after retries: {type(exc).__name__}") from None
        total = response.headers.get("x-wp-total")
        pages = response.headers.get("x-wp-totalpages")
        return WooPage(data, int(total) if total and total.isascii() and total.isdigit() else None,
                       int(pages) if pages and pages.isascii() and pages.isdigit() else None)

    async def _send(self, path: str, params: dict[str, Any] | None) -> tuple[httpx.Response, Any]:
        response = await self._http.get(path.lstrip("/"), params=params)
        status = response.status_code
        log.debug("GET %s %s -> %d", path, params or {}, status)
        if status in RETRY_STATUSES or (status == 403 and _wp_error(response) is None):
            raise TransientHTTPError(response)
        if response.is_redirect:
            raise WooCommerceApiError(
                f"GET {path} was redirected to {response.headers.get('location')!r}; redirects"
                " are not followed (the key must not reach another origin): use the final"
                " address as base_url", status=status)
        if status >= 400:
            raise self._refused(path, response)
        try:
            return response, exact_loads(response.content)
        except orjson.JSONDecodeError:
            # a security or caching plugin answering HTML with 200: worth another try
            raise TransientHTTPError(response) from None

    @staticmethod
    def _refused(path: str, response: httpx.Response) -> SourceError:
        error = _wp_error(response) or {}
        code, message = error.get("code"), error.get("message", response.reason_phrase)
        status = response.status_code
        if status == 401:
            return SourceAuthError(f"WooCommerce refused the credentials: {message} ({code})")
        if status == 403:
            return SourceAuthError(
                f"the key may not read {path}: {message} ({code}); give it read access")
        if code == "rest_no_route":
            return WooCommerceApiError(
                f"GET {path}: no such route ({message}); is WooCommerce 3.5+ active, with"
                " pretty permalinks, at this base_url?", status=status, code=code)
        return WooCommerceApiError(f"GET {path} answered {status} {code}: {message}",
                                   status=status, code=code)

    @staticmethod
    def _gave_up(path: str, response: httpx.Response) -> WooCommerceApiError:
        status = response.status_code
        if status == 403:
            why = ("a firewall or bot filter in front of the shop (an HTML 403, e.g. a"
                   " Cloudflare challenge) keeps refusing the connector: allow its address")
        elif status == 200:
            why = "the shop keeps answering a page that is not JSON (a security or cache plugin?)"
        else:
            why = f"the shop still answered {status} after retries"
        return WooCommerceApiError(f"GET {path}: {why}", status=status)
