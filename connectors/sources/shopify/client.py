"""The Shopify Admin GraphQL API over HTTP: one authenticated, paced, retried POST at a time.

Three kinds of trouble, three answers:

- transient failures (408, 429, 5xx, network errors, a body that is not JSON, and a 200
  carrying an ``INTERNAL_SERVER_ERROR`` GraphQL error) are retried through the project's one
  policy (connectors/http/retry.py), honouring ``Retry-After``;
- ``THROTTLED`` (HTTP 200) is a wait: the cost budget (throttle.py) already waits before
  each query, and a throttled answer just corrects it and the query waits again;
- ``MAX_COST_EXCEEDED`` is a refusal that no wait cures: ``QueryTooCostly`` tells the
  caller to ask for fewer nodes. So is a query dearer than the whole bucket.

The access token is added to a copy of each request inside the transport, so neither
httpx's request log nor an exception ever holds it; redirects are not followed, so it never
reaches another origin, and bulk result files are downloaded without it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Any

import httpx
import orjson
from pydantic import SecretStr

from connectors.http.redact import hide, unhide, wire_forms
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, TransientHTTPError, async_retrying
from connectors.http.tls import tls_context
from connectors.sources.base import SourceAuthError, SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.shopify.config import ShopifyConfig
from connectors.sources.shopify.throttle import CostBudget, budget_for

log = logging.getLogger("shopsync.sources.shopify")
USER_AGENT = "shopsync/0.1 (Shopify source connector)"
#: what a query is assumed to cost before an answer has said
DEFAULT_ESTIMATE = 50


class ShopifyApiError(SourceError):
    """Shopify refused a request; ``code`` is its GraphQL error code when it gave one."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class QueryTooCostly(ShopifyApiError):
    """The query requests more points than allowed (``limit``): ask for fewer nodes."""

    def __init__(self, message: str, *, cost: int, limit: int) -> None:
        super().__init__(message, code="MAX_COST_EXCEEDED")
        self.cost = cost
        self.limit = limit


class _Token(httpx.AsyncBaseTransport):
    """Adds ``X-Shopify-Access-Token`` to a copy of each request just before sending."""

    def __init__(self, inner: httpx.AsyncBaseTransport, token: SecretStr) -> None:
        self._inner = inner
        self._token = token

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = request.headers.copy()
        headers["x-shopify-access-token"] = self._token.get_secret_value()
        signed = httpx.Request(request.method, request.url, headers=headers,
                               stream=request.stream, extensions=request.extensions)
        return await self._inner.handle_async_request(signed)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _codes(body: dict[str, Any]) -> list[str]:
    errors = body.get("errors")
    if not isinstance(errors, list):
        return []
    return [str((e.get("extensions") or {}).get("code") or "") for e in errors if isinstance(e, dict)]


def _messages(body: dict[str, Any]) -> str:
    errors = body.get("errors")
    if isinstance(errors, list):
        return "; ".join(str(e.get("message")) for e in errors if isinstance(e, dict))
    return str(errors)


class ShopifyClient:
    def __init__(self, config: ShopifyConfig, *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self.retry = retry or RetryPolicy()
        token = config.access_token.get_secret_value()
        self._hidden = wire_forms(config.access_token)
        hide(self._hidden)
        key = hashlib.sha256(token.encode()).hexdigest()[:12]
        self.budget: CostBudget = budget_for(f"{config.shop_url}#{key}")
        self._requested: dict[tuple[str, int], int] = {}
        self._version_warned = False
        inner = transport or httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=httpx.Limits(max_connections=8, max_keepalive_connections=8))
        timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout)
        self._http = httpx.AsyncClient(
            transport=_Token(inner, config.access_token), timeout=timeout,
            follow_redirects=False,
            headers={"accept": "application/json", "content-type": "application/json",
                     "user-agent": USER_AGENT})
        # bulk result files live on a storage host: fetched without the token
        self.files = httpx.AsyncClient(transport=transport, timeout=timeout, verify=tls_context(),
                                       follow_redirects=True, headers={"user-agent": USER_AGENT})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shop_url={self.config.shop_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()
        await self.files.aclose()
        unhide(self._hidden)
        self._hidden = []

    async def execute(self, query: str, variables: dict[str, Any] | None = None, *,
                      size: int = 0) -> dict[str, Any]:
        """Run one query and return its ``data``, waiting for the budget first.

        ``size`` (the ``first`` the query asks for) keys what the connector learned of the
        query's requested cost, so the next one waits just long enough.

        Raises:
            QueryTooCostly: the query requests more than a query may, or than the bucket holds.
            SourceAuthError: the token was refused, or lacks a scope (ACCESS_DENIED).
            ShopifyApiError: any other refusal, or a transient one that outlived retries.
        """
        waited = 0.0
        learned = (query, size)
        while True:
            estimate = self._estimate(query, size)
            pause = self.budget.wait_for(estimate)
            if pause:
                if waited + pause > self.config.max_throttle_wait:
                    raise ShopifyApiError(f"the cost budget would keep this query waiting over"
                                          f" {self.config.max_throttle_wait:.0f}s; another app"
                                          " or process may be using the shop's whole bucket",
                                          code="THROTTLED")
                log.debug("waiting %.2fs for %d points of budget", pause, estimate)
                await asyncio.sleep(pause)
                waited += pause
                self.budget.waited += pause
            self.budget.reserve(estimate)
            body = await self._post({"query": query, "variables": variables or {}})
            cost = (body.get("extensions") or {}).get("cost") or {}
            self.budget.update(cost)
            if cost.get("requestedQueryCost") is not None:
                self._requested[learned] = int(cost["requestedQueryCost"])
            if not body.get("errors"):
                return body.get("data") or {}
            codes = _codes(body)
            if "THROTTLED" in codes:
                self.budget.throttled += 1
                requested = int(cost.get("requestedQueryCost") or estimate)
                if self.budget.maximum is not None and requested > self.budget.maximum:
                    raise QueryTooCostly(f"the query requests {requested} points but the bucket"
                                         f" holds {self.budget.maximum:.0f}",
                                         cost=requested, limit=int(self.budget.maximum))
                continue  # the budget now knows what is left: wait for it and ask again
            if "MAX_COST_EXCEEDED" in codes:
                requested = int(cost.get("requestedQueryCost") or 0) or self._cost_in(body)
                self._requested[learned] = requested
                raise QueryTooCostly(_messages(body).split("\n")[0], cost=requested,
                                     limit=self.config.max_query_cost)
            if "ACCESS_DENIED" in codes:
                raise SourceAuthError(f"Shopify denied access: {_messages(body)} — give the app"
                                      " the scope it names")
            raise ShopifyApiError(f"Shopify answered errors: {_messages(body)}",
                                  code=next(c for c in codes if c) if any(codes) else None)

    def _estimate(self, query: str, size: int) -> int:
        """The requested cost of ``query`` at ``size`` nodes: as last seen, else scaled from
        another size of the same query (cost grows with ``first``), else a guess."""
        known = self._requested.get((query, size))
        if known is not None:
            return known
        others = [(s, c) for (q, s), c in self._requested.items() if q == query and s]
        if others and size:
            other_size, other_cost = others[-1]
            return max(1, round(other_cost * size / other_size))
        return DEFAULT_ESTIMATE

    @staticmethod
    def _cost_in(body: dict[str, Any]) -> int:
        for error in body.get("errors") or ():
            cost = (error.get("extensions") or {}).get("cost")
            if cost:
                return int(cost)
        return 0

    async def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        content = orjson.dumps(payload)
        body: dict[str, Any] = {}
        try:
            async for attempt in async_retrying(self.retry, idempotent=True):
                with attempt:
                    body = await self._send(content)
        except TransientHTTPError as exc:
            raise ShopifyApiError(f"POST graphql.json: Shopify still answered"
                                  f" {exc.status_code} after retries",
                                  status=exc.status_code) from None
        except httpx.TransportError as exc:
            raise ShopifyApiError(f"POST graphql.json: network error after retries:"
                                  f" {type(exc).__name__}") from None
        return body

    async def _send(self, content: bytes) -> dict[str, Any]:
        started = time.perf_counter()
        response = await self._http.post(self.config.endpoint, content=content)
        status = response.status_code
        log.debug("POST graphql.json -> %d in %.3fs", status, time.perf_counter() - started)
        if status in RETRY_STATUSES:
            raise TransientHTTPError(response)
        if response.is_redirect:
            raise ShopifyApiError(f"the shop redirected to {response.headers.get('location')!r};"
                                  " redirects are not followed (the token must not reach another"
                                  " origin): use the shop's myshopify.com address", status=status)
        if status >= 400:
            raise self._refused(response)
        try:
            body = exact_loads(response.content)
        except orjson.JSONDecodeError:
            raise TransientHTTPError(response) from None  # an HTML page from the edge
        if not isinstance(body, dict):
            raise ShopifyApiError("Shopify answered a body that is not a JSON object")
        if "INTERNAL_SERVER_ERROR" in _codes(body):
            raise TransientHTTPError(response)
        self._check_version(response)
        return body

    def _check_version(self, response: httpx.Response) -> None:
        served = response.headers.get("x-shopify-api-version")
        if served and served != self.config.api_version and not self._version_warned:
            self._version_warned = True
            log.warning("Shopify serves API version %s instead of the pinned %s (no longer"
                        " supported?): fields may differ; pin a supported version", served,
                        self.config.api_version)

    def _refused(self, response: httpx.Response) -> SourceError:
        status = response.status_code
        try:
            detail = str(orjson.loads(response.content).get("errors"))
        except (orjson.JSONDecodeError, AttributeError):
            detail = response.reason_phrase
        if status == 401:
            return SourceAuthError(f"Shopify refused the access token (401): {detail}")
        if status == 403:
            return SourceAuthError(f"the access token may not do this (403): {detail}; give the"
                                   " app the read scopes it needs")
        if status == 402:
            return ShopifyApiError(f"the shop is frozen or unpaid (402): {detail}", status=status)
        if status == 404:
            return ShopifyApiError(f"no Admin API at {self.config.endpoint} (404): check the shop"
                                   f" URL and API version {self.config.api_version}",
                                   status=status)
        return ShopifyApiError(f"POST graphql.json answered {status}: {detail}", status=status)
