"""The Marketing API's transport: one authenticated, retried request at a time.

Knows the base URL rules (``…/v1``; https except on loopback), the two key patterns, the
retry policy, the run's circuit breaker when given one (the API down for a whole stretch:
``DestinationDown``) and the error types; knows nothing of individual routes. The key lives
in a ``SecretStr`` and is set on each request only, so it never shows in a repr, a log line or
an exception, and redirects are never followed, so it never reaches another origin.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from pydantic import SecretStr

from connectors.http.breaker import CircuitBreaker, CircuitOpenError
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, TransientHTTPError, async_retrying
from connectors.http.tls import tls_context
from connectors.http.urls import secure_url
from connectors.marketing.errors import (
    ClientConfigError,
    DestinationDown,
    MarketingApiError,
    TransientError,
    error_for,
)

log = logging.getLogger("shopsync.marketing")

API_KEY_HEADER = "spm-api-key"
GENERAL_KEY_PATTERN = re.compile(r"^[a-zA-Z0-9]{8}\.[A-Za-z0-9_-]+$")
KPI_KEY_PATTERN = re.compile(r"^[a-zA-Z0-9-]{20,64}$")
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


@dataclass
class TransportStats:
    """What the transport has seen, for callers that adapt their pace (the bulk writer)."""

    requests: int = 0
    attempts: int = 0
    throttled: int = 0
    server_errors: int = 0
    network_errors: int = 0
    latencies: list[float] = field(default_factory=list, repr=False)




def check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash; https required except on loopback (the one
    secure-address check, ``secure_url``)."""
    try:
        url = secure_url(base_url, carrying="the API key travels",
                         invalid="must be an http(s) URL ending in /v1")
    except ValueError as exc:
        raise ClientConfigError(str(exc)) from None
    if not url.path.rstrip("/").endswith("/v1"):
        raise ClientConfigError(
            f"base URL {base_url!r} must end with the version prefix /v1"
            " (for example https://api.example.com/v1)"
        )
    return str(url).rstrip("/")


def _secret(value: str | SecretStr | None) -> SecretStr | None:
    return value if isinstance(value, SecretStr) or value is None else SecretStr(value)


class ApiTransport:
    """Sends one request to the API with the right key, retrying what is transient."""

    def __init__(
        self,
        base_url: str,
        api_key: str | SecretStr | None = None,
        *,
        kpi_api_key: str | SecretStr | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_connections: int = 32,
        transport: httpx.AsyncBaseTransport | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.base_url = check_base_url(base_url)
        self._key = _secret(api_key)
        self._kpi_key = _secret(kpi_api_key)
        self.retry = retry or RetryPolicy()
        #: when given, every request of this transport counts towards it (one per run)
        self.breaker = breaker
        self.stats = TransportStats()
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            timeout=timeout,
            follow_redirects=False,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            transport=transport,
            verify=tls_context(),
            headers={"accept": "application/json", "user-agent": "shopsync"},
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    def _key_for(self, kpi: bool) -> str:
        secret, pattern = (self._kpi_key, KPI_KEY_PATTERN) if kpi else (self._key, GENERAL_KEY_PATTERN)
        which = "the custom KPI key" if kpi else "the API key"
        if secret is None:
            raise ClientConfigError(f"{which} is not set; it must match {pattern.pattern}")
        key = secret.get_secret_value()
        if not pattern.match(key):
            raise ClientConfigError(f"{which} is malformed: it must match {pattern.pattern}")
        return key

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        json: Any = None,
        kpi: bool = False,
        idempotent: bool = True,
    ) -> Any:
        """Send ``method path`` (relative to the base URL) and return the decoded JSON answer.

        Raises:
            ClientConfigError: the key needed for this route is missing or malformed.
            DestinationDown: every request failed for the breaker's stretch (none is sent).
            MarketingApiError: a typed error carrying the API's message (see errors.py).
        """
        headers = {API_KEY_HEADER: self._key_for(kpi)}
        content = orjson.dumps(json) if json is not None else None
        if content is not None:
            headers["content-type"] = "application/json"
        self.stats.requests += 1
        try:
            async for attempt in async_retrying(self.retry, idempotent=idempotent,
                                                breaker=self.breaker):
                with attempt:
                    response = await self._send(method, path, params, content, headers)
        except CircuitOpenError as exc:
            raise DestinationDown(exc, method=method, path=path) from None
        except TransientHTTPError as exc:
            raise error_for(exc.response) from None
        except httpx.TransportError as exc:
            raise TransientError(
                f"network error after retries: {type(exc).__name__}", method=method, path=path
            ) from None
        if response.is_redirect:
            raise MarketingApiError(
                "the API answered with a redirect, which is not followed (the key must not"
                " reach another origin); check the base URL",
                status_code=response.status_code, method=method, path=path,
            )
        if response.status_code >= 400:
            raise error_for(response)
        return orjson.loads(response.content) if response.content else None

    async def _send(
        self, method: str, path: str, params: Any, content: bytes | None, headers: dict[str, str]
    ) -> httpx.Response:
        breaker = self.breaker
        if breaker is not None:
            breaker.check()
        self.stats.attempts += 1
        started = time.perf_counter()
        try:
            response = await self._http.request(
                method, path.lstrip("/"), params=params, content=content, headers=headers
            )
        except httpx.TransportError as exc:
            self.stats.network_errors += 1
            if breaker is not None:
                breaker.failure(type(exc).__name__)
                breaker.check()
            raise
        elapsed = time.perf_counter() - started
        self.stats.latencies.append(elapsed)
        if len(self.stats.latencies) > 1000:
            del self.stats.latencies[:500]
        log.debug("%s /%s -> %d in %.3fs", method, path.lstrip("/"), response.status_code, elapsed)
        if response.status_code == 429:
            self.stats.throttled += 1
        elif response.status_code >= 500:
            self.stats.server_errors += 1
        if breaker is not None and response.status_code >= 500:
            breaker.failure(f"{response.status_code} {response.reason_phrase}".strip())
            breaker.check()
        elif breaker is not None:
            breaker.success()
        if response.status_code in RETRY_STATUSES:
            raise TransientHTTPError(response)
        return response
