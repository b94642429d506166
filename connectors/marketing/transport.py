"""The Marketing API's transport: one authenticated, retried request at a time, on the
project's one client (connectors/http/client.py).

Knows the base URL rules (``…/v1``; https except on loopback), the two key patterns, the
retry policy, the run's circuit breaker when given one (the API down for a whole stretch:
``DestinationDown``) and the error types; knows nothing of individual routes. The key lives
in a ``SecretStr`` and is set on each request only (an ``httpx.Auth``: the general key, or
the KPI key for the KPI routes), so it never shows in a repr, a log line or an exception,
and redirects are never followed, so it never reaches another origin.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import orjson
from pydantic import SecretStr

from connectors.http.auth import HeaderSecret
from connectors.http.breaker import CircuitBreaker, CircuitOpenError
from connectors.http.client import HttpClient, TransportStats
from connectors.http.pacing import Pacing
from connectors.http.retry import RetryPolicy
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

__all__ = ["DEFAULT_TIMEOUT", "ApiTransport", "TransportStats", "check_base_url"]


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


class ApiTransport(HttpClient):
    """Sends one request to the API with the right key, retrying what is transient."""

    log = log

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
        pacer: Pacing | None = None,
    ) -> None:
        self._key = _secret(api_key)
        self._kpi_key = _secret(kpi_api_key)
        super().__init__(
            check_base_url(base_url),
            timeout=timeout,
            headers={"accept": "application/json", "user-agent": "shopsync"},
            retry=retry, transport=transport, max_connections=max_connections, breaker=breaker,
            pacer=pacer)

    def _auth_for(self, kpi: bool) -> HeaderSecret:
        secret, pattern = (self._kpi_key, KPI_KEY_PATTERN) if kpi else (self._key, GENERAL_KEY_PATTERN)
        which = "the custom KPI key" if kpi else "the API key"
        if secret is None:
            raise ClientConfigError(f"{which} is not set; it must match {pattern.pattern}")
        if not pattern.match(secret.get_secret_value()):
            raise ClientConfigError(f"{which} is malformed: it must match {pattern.pattern}")
        return HeaderSecret(API_KEY_HEADER, secret)

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
        auth = self._auth_for(kpi)
        content = orjson.dumps(json) if json is not None else None
        headers = {"content-type": "application/json"} if content is not None else None
        try:
            return await self.send(method, path, params=params, content=content,
                                         headers=headers, auth=auth, idempotent=idempotent)
        except CircuitOpenError as exc:
            raise DestinationDown(exc, method=method, path=path) from None

    def _redirected(self, method: str, path: str, response: httpx.Response) -> Exception:
        return MarketingApiError(
            "the API answered with a redirect, which is not followed (the key must not"
            " reach another origin); check the base URL",
            status_code=response.status_code, method=method, path=path,
        )

    def _refused(self, method: str, path: str, response: httpx.Response) -> Exception:
        return error_for(response)

    def _decode(self, method: str, path: str, response: httpx.Response) -> Any:
        return orjson.loads(response.content) if response.content else None

    def _gave_up(self, method: str, path: str, response: httpx.Response) -> Exception:
        return error_for(response)

    def _network_error(self, method: str, path: str, exc: httpx.TransportError) -> Exception:
        return TransientError(
            f"network error after retries: {type(exc).__name__}", method=method, path=path)
