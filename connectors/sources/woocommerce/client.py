"""The WooCommerce REST API v3 over HTTP: one authenticated, paced, retried GET at a time, on
the project's one client (connectors/http/client.py); this module keeps WooCommerce's quirks.

Retried, through the project's one policy (connectors/http/retry.py): 408, 429 and 5xx, plus
two answers that come from what stands in front of WordPress rather than from WooCommerce —
a 403 whose body is not a WordPress error (a WAF or bot filter such as Cloudflare's
challenge page) and a 200 whose body is not JSON (a security or caching plugin's HTML).
A 403 in the WordPress shape is a real refusal and is not retried.

The consumer key and secret are added by an ``httpx.Auth`` (Basic header, or query
parameters) just before each request goes out; redirects are not followed, so they never
reach another origin. With query-string auth they are in the URL httpx logs, and WordPress
echoes them back in the ``Link`` header, which httpcore logs at DEBUG: a filter on the
httpx/httpcore loggers blanks them out of those records.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from connectors.http.auth import BasicSecret, QuerySecrets
from connectors.http.client import HttpClient
from connectors.http.pacing import Pacer, Pacing
from connectors.http.retry import RetryPolicy
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


def _wp_error(response: httpx.Response) -> dict[str, Any] | None:
    """The ``{code, message, data}`` body of a WordPress error, or None (HTML, empty…)."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and "code" in body and "message" in body else None


class WooClient(HttpClient):
    error = WooCommerceApiError
    log = log
    address = "base_url"
    loads = staticmethod(exact_loads)

    def __init__(
        self,
        config: WooCommerceConfig,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        pacer: Pacing | None = None,
    ) -> None:
        secrets = {"consumer_key": config.consumer_key, "consumer_secret": config.consumer_secret}
        super().__init__(
            config.base_url,
            auth=QuerySecrets(secrets) if config.query_string_auth
            else BasicSecret(config.consumer_key, config.consumer_secret),
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            headers={"accept": "application/json", "user-agent": USER_AGENT},
            retry=retry, transport=transport,
            # the engine hands a budget shared across processes; alone, this process paces itself
            pacer=pacer if pacer is not None else Pacer(config.requests_per_second))

    async def get(self, path: str, params: dict[str, Any] | None = None) -> WooPage:
        """GET ``path`` (relative to ``…/wp-json/wc/v3``) and decode it.

        Raises:
            SourceAuthError: the key was refused (401) or may not read this resource (403).
            WooCommerceApiError: any other refusal, or a transient one that outlived retries.
        """
        page: WooPage = await self.send("GET", path, params=params)
        return page

    def _transient(self, response: httpx.Response) -> bool:
        # a 403 that is not WordPress's: a WAF or bot filter in front of the shop
        return super()._transient(response) or (
            response.status_code == 403 and _wp_error(response) is None)

    def _decode(self, method: str, path: str, response: httpx.Response) -> WooPage:
        total = response.headers.get("x-wp-total")
        pages = response.headers.get("x-wp-totalpages")
        return WooPage(super()._decode(method, path, response),
                       int(total) if total and total.isascii() and total.isdigit() else None,
                       int(pages) if pages and pages.isascii() and pages.isdigit() else None)

    @staticmethod
    def _refused(method: str, path: str, response: httpx.Response) -> SourceError:
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
    def _gave_up(method: str, path: str, response: httpx.Response) -> WooCommerceApiError:
        status = response.status_code
        if status == 403:
            why = ("a firewall or bot filter in front of the shop (an HTML 403, e.g. a"
                   " Cloudflare challenge) keeps refusing the connector: allow its address")
        elif status == 200:
            why = "the shop keeps answering a page that is not JSON (a security or cache plugin?)"
        else:
            why = f"the shop still answered {status} after retries"
        return WooCommerceApiError(f"GET {path}: {why}", status=status)
