"""The Magento REST API over HTTP: one authenticated, paced, retried GET at a time, on the
project's one client (connectors/http/client.py); this module keeps Magento's quirks.

Retried, through the project's one policy (connectors/http/retry.py): 408, 429 and 5xx, plus
two answers that come from what stands in front of Magento rather than from Magento — a 403
whose body is not a Magento error (a WAF or bot filter such as Cloudflare's block page) and a
200 whose body is not JSON (a cache or maintenance page). Magento itself refuses a token with
401 ``{"message": "The consumer isn't authorized to access %resources.", ...}``.

The bearer token is added by an ``httpx.Auth`` just before each request goes out, so no
request the connector builds, log line or exception holds it; redirects are not followed,
so it never reaches another origin.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import orjson

from connectors.http.auth import HeaderSecret
from connectors.http.client import HttpClient
from connectors.http.pacing import Pacer, Pacing
from connectors.http.retry import RetryPolicy
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


class MagentoClient(HttpClient):
    error = MagentoApiError
    secret = "the token"
    log = log
    loads = staticmethod(exact_loads)

    def __init__(self, config: MagentoConfig, *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 pacer: Pacing | None = None) -> None:
        super().__init__(
            config.base_url + "/V1",
            auth=HeaderSecret("authorization", config.token, scheme="Bearer"),
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            headers={"accept": "application/json", "user-agent": USER_AGENT},
            retry=retry, transport=transport,
            # the engine hands a budget shared across processes; alone, this process paces itself
            pacer=pacer if pacer is not None else Pacer(config.requests_per_second))
        self.base_url = config.base_url

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``path`` (relative to ``…/rest/<store>/V1``) and decode it.

        Raises:
            SourceAuthError: the token was refused (401) or may not read this resource.
            MagentoApiError: any other refusal, or a transient one that outlived retries.
        """
        return await self.send("GET", path, params=params)

    def _transient(self, response: httpx.Response) -> bool:
        # a 403 that is not Magento's: a WAF or bot filter in front of the shop
        return super()._transient(response) or (
            response.status_code == 403 and magento_error(response) is None)

    def _refused(self, method: str, path: str, response: httpx.Response) -> SourceError:
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
    def _gave_up(method: str, path: str, response: httpx.Response) -> MagentoApiError:
        status = response.status_code
        if status == 403:
            why = ("a firewall or bot filter in front of the shop (an HTML 403, e.g. a"
                   " Cloudflare block page) keeps refusing the connector: allow its address")
        elif status == 200:
            why = "the shop keeps answering a page that is not JSON (a cache or maintenance page?)"
        else:
            why = f"the shop still answered {status} after retries"
        return MagentoApiError(f"GET {path}: {why}", status=status)
