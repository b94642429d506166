"""The PrestaShop webservice over HTTP: one authenticated, paced, retried GET at a time, on
the project's one client (connectors/http/client.py); this module keeps PrestaShop's quirks.

JSON is asked for twice (the ``Output-Format`` header and ``output_format=JSON``), so a
proxy that drops unknown headers still gets JSON. Retried, through the project's one
policy (connectors/http/retry.py): 408, 429 and 5xx — except a 503 with PrestaShop's code
22 (the webservice is switched off: waiting will not help) — plus a 200 whose body is not
JSON (a cache or security plugin's HTML page). A JSON body preceded by PHP notices
(``display_errors`` left on) is read after them.

The key is added by an ``httpx.Auth`` (HTTP Basic user name, or ``ws_key``) just before
each request goes out; redirects are not followed, so it never reaches another origin; a
filter on the httpx/httpcore loggers blanks it out of their records (``ws_key`` is in the
URL httpx logs).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx
import orjson

from connectors.http.auth import BasicSecret, QuerySecrets
from connectors.http.client import HttpClient
from connectors.http.pacing import Pacer, Pacing
from connectors.http.retry import RetryPolicy, TransientHTTPError
from connectors.sources.base import SourceAuthError, SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.prestashop.config import PrestaShopConfig

log = logging.getLogger("shopsync.sources.prestashop")
USER_AGENT = "shopsync/0.1 (PrestaShop source connector)"
_PHP_MESSAGES = re.compile(rb"^\s*(?:<br\s*/?>\s*)?(?:<b>[^<]*</b>:.*?<br\s*/?>\s*)+", re.DOTALL)
_AUTH_HINT = ("the webservice got no key: is the Authorization header stripped on its way to"
              " PHP (Apache CGI/FastCGI)? add `CGIPassAuth On` on the server, or set"
              " connection.options.ws_key_in_query: true")


class PrestaShopApiError(SourceError):
    """The webservice refused a request; ``code`` is PrestaShop's error code."""

    def __init__(self, message: str, *, status: int | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _errors(content: bytes) -> list[dict[str, Any]]:
    """The ``errors`` of a PrestaShop error body (empty for plain text, HTML, XML…)."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return []
    errors = body.get("errors") if isinstance(body, dict) else None
    return [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []


def _first(content: bytes) -> tuple[int | None, str]:
    errors = _errors(content)
    if not errors:
        return None, ""
    code = errors[0].get("code")
    return (int(str(code)) if str(code).isascii() and str(code).isdigit() else None), str(errors[0].get("message", ""))


class PrestaShopClient(HttpClient):
    error = PrestaShopApiError
    log = log
    address = "the shop URL"
    loads = staticmethod(exact_loads)

    def __init__(self, config: PrestaShopConfig, *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 pacer: Pacing | None = None) -> None:
        super().__init__(
            config.base_url,
            # the key is the user name; PrestaShop wants no password
            auth=QuerySecrets({"ws_key": config.key}) if config.ws_key_in_query
            else BasicSecret(config.key),
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            headers={"accept": "application/json", "output-format": "JSON",
                     "user-agent": USER_AGENT},
            retry=retry, transport=transport,
            # the engine hands a budget shared across processes; alone, this process paces itself
            pacer=pacer if pacer is not None else Pacer(config.requests_per_second))
        self.config = config
        self.ps_version: str | None = None

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``path`` (relative to ``…/api``) as JSON.

        Raises:
            SourceAuthError: the key was refused, or may not read this resource or shop.
            PrestaShopApiError: any other refusal, or a transient one that outlived retries.
        """
        query = {"output_format": "JSON", **(params or {})}
        if self.config.id_shop is not None:
            query.setdefault("id_shop", self.config.id_shop)
        return await self.send("GET", path, params=query)

    def _read(self, method: str, path: str, response: httpx.Response) -> Any:
        self._note_version(response)
        if response.status_code == 503 and _first(response.content)[0] == 22:
            raise PrestaShopApiError(
                "the PrestaShop webservice is disabled: enable it in the Back Office"
                " (Advanced Parameters → Webservice)", status=503, code=22)
        return super()._read(method, path, response)

    def _decode(self, method: str, path: str, response: httpx.Response) -> Any:
        content = response.content
        try:
            return exact_loads(content)
        except orjson.JSONDecodeError:
            pass
        stripped = _PHP_MESSAGES.sub(b"", content, count=1)
        if stripped != content:
            try:
                body = exact_loads(stripped)
            except orjson.JSONDecodeError:
                pass
            else:
                log.warning("GET %s: PHP printed notices before the JSON (display_errors is on"
                            " in the shop); they were skipped", path)
                return body
        if content.lstrip().startswith(b"<?xml"):
            raise PrestaShopApiError(
                f"GET {path} answered XML although JSON was asked for (Output-Format header"
                " and output_format=JSON): is something in front of the shop dropping them?",
                status=response.status_code)
        raise TransientHTTPError(response)  # an HTML page from a plugin or cache: try again

    def _note_version(self, response: httpx.Response) -> None:
        version = response.headers.get("psws-version")
        if not version or version == self.ps_version:
            return
        self.ps_version = version
        major = "8" if not version.startswith("1.") else ".".join(version.split(".")[:2])
        expected = self.config.version
        if expected and not (major == expected or major.startswith(expected + ".")):
            log.warning("connection.options.version says %s but the shop answers PrestaShop %s",
                        expected, version)

    def _refused(self, method: str, path: str, response: httpx.Response) -> SourceError:
        status = response.status_code
        code, message = _first(response.content)
        resource = path.strip("/").split("/")[0]
        if status == 401:
            if code is None or code in (16, 17):
                return SourceAuthError(f"PrestaShop answered 401 to GET {path}: {_AUTH_HINT}")
            if code == 26:
                return SourceAuthError(
                    f"the webservice key may not read {resource} (code 26): give it GET on"
                    f" {resource} in Advanced Parameters → Webservice")
            return SourceAuthError(f"PrestaShop refused the webservice key: {message} (code {code})")
        if status == 403:
            return SourceAuthError(f"PrestaShop refused GET {path}: {message} (code {code});"
                                   " check the key's shops (connection.options.id_shop)")
        hint = ""
        if code in (32, 38) and "date" in str(response.request.url.params):
            hint = " (date filters and sorts need date=1)"
        return PrestaShopApiError(f"GET {path} answered {status}: {message or response.reason_phrase}"
                                  f"{f' (code {code})' if code is not None else ''}{hint}",
                                  status=status, code=code)

    @staticmethod
    def _gave_up(method: str, path: str, response: httpx.Response) -> PrestaShopApiError:
        status = response.status_code
        code, message = _first(response.content)
        if status == 200:
            why = "the shop keeps answering a page that is not JSON (a security or cache plugin?)"
        elif message:
            why = f"the shop still answered {status} after retries: {message} (code {code})"
        else:
            why = f"the shop still answered {status} after retries"
        return PrestaShopApiError(f"GET {path}: {why}", status=status, code=code)
