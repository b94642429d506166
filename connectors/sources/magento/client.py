"""The Magento REST API over HTTP: one authenticated, retried GET at a time.

Retried, through the project's one policy (connectors/http/retry.py): 408, 429 and 5xx, plus
two answers that come from what stands in front of Magento rather than from Magento — a 403
whose body is not a Magento error (a WAF or bot filter such as Cloudflare's block page) and a
200 whose body is not JSON (a cache or maintenance page). Magento itself refuses a token with
401 ``{"message": "The consumer isn't authorized to access %resources.", ...}``.

The bearer token is added to a copy of each request inside the transport, so neither
httpx's request objects, its logs nor an exception ever hold it; redirects are not followed,
so it never reaches another origin.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import orjson
from pydantic import SecretStr

from connectors.http.pacing import Pacer
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, TransientHTTPError, async_retrying
from connectors.http.tls import tls_context
from connectors.sources.base import SourceAuthError, SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.magento.config import MagentoConfig

log = logging.getLogger("shopsync.sources.magento")
USER_AGENT = "shopsync/0.1 (Magento source connector)"
_PLACEHOLDER = re.compile(r"%(\w+)")


class MagentoApiError(SourceError):
    """Magento refused a request; ``message`` has its placeholders filled in."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Bearer(httpx.AsyncBaseTransport):
    """Adds ``Authorization: Bearer …`` to a copy of each request just before sending."""

    def __init__(self, inner: httpx.AsyncBaseTransport, token: SecretStr) -> None:
        self._inner = inner
        self._token = token

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = request.headers.copy()
        headers["authorization"] = f"Bearer {self._token.get_secret_value()}"
        signed = httpx.Request(request.method, request.url, headers=headers,
                               stream=request.stream, extensions=request.extensions)
        return await self._inner.handle_async_request(signed)

    async def aclose(self) -> None:
        await self._inner.aclose()


def magento_error(response: httpx.Response) -> str | None:
    """The message of a Magento error body with its ``%name``/``%1`` placeholders filled from
    ``parameters`` (a dict, or a list numbered from 1); None when the body is not one."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return None
    parameters = body.get("parameters")
    if isinstance(parameters, list):
        parameters = {str(i + 1): v for i, v in enumerate(parameters)}
    if not isinstance(parameters, dict):
        parameters = {}
    return _PLACEHOLDER.sub(lambda m: str(parameters.get(m.group(1), m.group(0))), body["message"])


class MagentoClient:
    def __init__(self, config: MagentoConfig, *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = config.base_url
        self.retry = retry or RetryPolicy()
        self.pacer = Pacer(config.requests_per_second)
        inner = transport or httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=16))
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/V1/",
            transport=_Bearer(inner, config.token),
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            follow_redirects=False,
            headers={"accept": "application/json", "user-agent": USER_AGENT},
        )
        self.requests = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``path`` (relative to ``…/rest/<store>/V1``) and decode it.

        Raises:
            SourceAuthError: the token was refused (401) or may not read this resource.
            MagentoApiError: any other refusal, or a transient one that outlived retries.
        """
        try:
            async for attempt in async_retrying(self.retry, idempotent=True):
                with attempt:
                    await self.pacer.wait()
                    return await self._send(path, params)
        except TransientHTTPError as exc:
            raise self._gave_up(path, exc.response) from None
        except httpx.TransportError as exc:
            raise MagentoApiError(
                f"GET {path}: network error after retries: {type(exc).__name__}") from None
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def _send(self, path: str, params: dict[str, Any] | None) -> Any:
        self.requests += 1
        response = await self._http.get(path.lstrip("/"), params=params)
        status = response.status_code
        log.debug("GET %s -> %d", path, status)
        if status in RETRY_STATUSES or (status == 403 and magento_error(response) is None):
            raise TransientHTTPError(response)
        if response.is_redirect:
            raise MagentoApiError(
                f"GET {path} was redirected to {response.headers.get('location')!r}; redirects"
                " are not followed (the token must not reach another origin): use the final"
                " address as the base URL", status=status)
        if status >= 400:
            raise self._refused(path, response)
        try:
            return exact_loads(response.content)
        except orjson.JSONDecodeError:
            # a cache or maintenance page answering HTML with 200: worth another try
            raise TransientHTTPError(response) from None

    def _refused(self, path: str, response: httpx.Response) -> SourceError:
        message = magento_error(response) or response.reason_phrase
        status = response.status_code
        if status == 401:
            return SourceAuthError(
                f"Magento refused the token: {message} An admin token expires after 4 hours;"
                " an integration token works as a bearer token on Magento 2.4.4+ only when"
                " Stores > Configuration > Services > OAuth > Consumer Settings > 'Allow OAuth"
                " Access Tokens to be used as standalone Bearer tokens' is Yes, and it needs"
                " read access to the resource named.")
        if status == 403:
            return SourceAuthError(f"the token may not read {path}: {message}")
        if status == 404 and "match any route" in message:
            return MagentoApiError(
                f"GET {path}: {message} Is {self.base_url} the shop's REST root"
                " (https://host/rest/<store_code>) and the module enabled?", status=status)
        return MagentoApiError(f"GET {path} answered {status}: {message}", status=status)

    @staticmethod
    def _gave_up(path: str, response: httpx.Response) -> MagentoApiError:
        status = response.status_code
        if status == 403:
            why = ("a firewall or bot filter in front of the shop (an HTML 403, e.g. a"
                   " Cloudflare block page) keeps refusing the connector: allow its address")
        elif status == 200:
            why = "the shop keeps answering a page that is not JSON (a cache or maintenance page?)"
        else:
            why = f"the shop still answered {status} after retries"
        return MagentoApiError(f"GET {path}: {why}", status=status)
