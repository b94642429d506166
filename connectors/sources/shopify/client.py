"""The Shopify Admin GraphQL API over HTTP: one authenticated, paced, retried POST at a time,
on the project's one client (connectors/http/client.py); this module keeps Shopify's quirks.

Three kinds of trouble, three answers:

- transient failures (408, 429, 5xx, network errors, a body that is not JSON, and a 200
  carrying an ``INTERNAL_SERVER_ERROR`` GraphQL error) are retried through the project's one
  policy (connectors/http/retry.py), honouring ``Retry-After``;
- ``THROTTLED`` (HTTP 200) is a wait: the cost budget (throttle.py) already waits before
  each attempt (the client's pacing hook), and a throttled answer just corrects it and the
  query is asked again after the budget's wait (``Throttled``, through the same policy);
- ``MAX_COST_EXCEEDED`` is a refusal that no wait cures: ``QueryTooCostly`` tells the
  caller to ask for fewer nodes. So is a query dearer than the whole bucket.

The access token is added by an ``httpx.Auth`` just before each request goes out, so no
request the connector builds, log line or exception holds it; redirects are not followed, so
it never reaches another origin, and bulk result files are downloaded without it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

import httpx
import orjson

from connectors.http.auth import HeaderSecret
from connectors.http.client import HttpClient
from connectors.http.retry import RetryPolicy, Throttled, TransientHTTPError
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


class ShopifyClient(HttpClient):
    error = ShopifyApiError
    secret = "the token"
    log = log

    def __init__(self, config: ShopifyConfig, *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        timeout = httpx.Timeout(config.timeout, connect=config.connect_timeout)
        super().__init__(
            config.endpoint.rsplit("/", 1)[0],
            auth=HeaderSecret("x-shopify-access-token", config.access_token),
            timeout=timeout,
            headers={"accept": "application/json", "content-type": "application/json",
                     "user-agent": USER_AGENT},
            retry=retry, transport=transport, max_connections=8)
        self.config = config
        key = hashlib.sha256(config.access_token.get_secret_value().encode()).hexdigest()[:12]
        self.budget: CostBudget = budget_for(f"{config.shop_url}#{key}")
        self._requested: dict[tuple[str, int], int] = {}
        self._version_warned = False
        # bulk result files live on a storage host: fetched without the token
        self.files = httpx.AsyncClient(transport=transport, timeout=timeout, verify=tls_context(),
                                       follow_redirects=True, headers={"user-agent": USER_AGENT})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shop_url={self.config.shop_url!r})"

    async def aclose(self) -> None:
        await super().aclose()
        await self.files.aclose()

    async def execute(self, query: str, variables: dict[str, Any] | None = None, *,
                      size: int = 0) -> dict[str, Any]:
        """Run one query and return its ``data``, waiting for the budget before each attempt.

        ``size`` (the ``first`` the query asks for) keys what the connector learned of the
        query's requested cost, so the next one waits just long enough. A ``THROTTLED``
        answer corrects the budget and is asked again (``Throttled``, through the one retry
        policy), after the budget's wait.

        Raises:
            QueryTooCostly: the query requests more than a query may, or than the bucket holds.
            SourceAuthError: the token was refused, or lacks a scope (ACCESS_DENIED).
            ShopifyApiError: any other refusal, or a transient one that outlived retries.
        """
        ask = _Ask(self, query, size)
        content = orjson.dumps({"query": query, "variables": variables or {}})
        data: dict[str, Any] = await self.send("POST", "graphql.json", content=content,
                                                  pace=ask.pace, read=ask.read)
        return data

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

    def _decode(self, method: str, path: str, response: httpx.Response) -> dict[str, Any]:
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

    def _redirected(self, method: str, path: str, response: httpx.Response) -> Exception:
        return ShopifyApiError(f"the shop redirected to {response.headers.get('location')!r};"
                               " redirects are not followed (the token must not reach another"
                               " origin): use the shop's myshopify.com address",
                               status=response.status_code)

    def _gave_up(self, method: str, path: str, response: httpx.Response) -> Exception:
        return ShopifyApiError(f"POST graphql.json: Shopify still answered"
                               f" {response.status_code} after retries",
                               status=response.status_code)

    def _check_version(self, response: httpx.Response) -> None:
        served = response.headers.get("x-shopify-api-version")
        if served and served != self.config.api_version and not self._version_warned:
            self._version_warned = True
            log.warning("Shopify serves API version %s instead of the pinned %s (no longer"
                        " supported?): fields may differ; pin a supported version", served,
                        self.config.api_version)

    def _refused(self, method: str, path: str, response: httpx.Response) -> SourceError:
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


class _Ask:
    """One query's attempts: the cost budget's wait before each (bounded by
    ``max_throttle_wait`` over them all), and what each answer's cost and errors say."""

    def __init__(self, client: ShopifyClient, query: str, size: int) -> None:
        self.client = client
        self.query, self.size = query, size
        self.waited = 0.0
        self.estimate = DEFAULT_ESTIMATE

    async def pace(self) -> None:
        client, budget = self.client, self.client.budget
        self.estimate = client._estimate(self.query, self.size)
        pause = budget.wait_for(self.estimate)
        if pause:
            limit = client.config.max_throttle_wait
            if self.waited + pause > limit:
                raise ShopifyApiError(f"the cost budget would keep this query waiting over"
                                      f" {limit:.0f}s; another app or process may be using"
                                      " the shop's whole bucket", code="THROTTLED")
            log.debug("waiting %.2fs for %d points of budget", pause, self.estimate)
            await asyncio.sleep(pause)
            self.waited += pause
            budget.waited += pause
        budget.reserve(self.estimate)

    def read(self, response: httpx.Response) -> dict[str, Any]:
        client, budget = self.client, self.client.budget
        body = client._read("POST", "graphql.json", response)
        cost = (body.get("extensions") or {}).get("cost") or {}
        budget.update(cost)
        learned = (self.query, self.size)
        if cost.get("requestedQueryCost") is not None:
            client._requested[learned] = int(cost["requestedQueryCost"])
        if not body.get("errors"):
            data: dict[str, Any] = body.get("data") or {}
            return data
        codes = _codes(body)
        if "THROTTLED" in codes:
            budget.throttled += 1
            requested = int(cost.get("requestedQueryCost") or self.estimate)
            if budget.maximum is not None and requested > budget.maximum:
                raise QueryTooCostly(f"the query requests {requested} points but the bucket"
                                     f" holds {budget.maximum:.0f}",
                                     cost=requested, limit=int(budget.maximum))
            raise Throttled(response)  # the budget now knows what is left: wait, ask again
        if "MAX_COST_EXCEEDED" in codes:
            requested = int(cost.get("requestedQueryCost") or 0) or client._cost_in(body)
            client._requested[learned] = requested
            raise QueryTooCostly(_messages(body).split("\n")[0], cost=requested,
                                 limit=client.config.max_query_cost)
        if "ACCESS_DENIED" in codes:
            raise SourceAuthError(f"Shopify denied access: {_messages(body)} — give the app"
                                  " the scope it names")
        raise ShopifyApiError(f"Shopify answered errors: {_messages(body)}",
                              code=next(c for c in codes if c) if any(codes) else None)
