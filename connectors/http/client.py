"""The one HTTP client skeleton every connector builds on: the source shops' clients and the
Marketing API's transport.

What they share lives here: timeouts, an injectable transport (tests pass a mock or a fake
shop's; else the pool of ``lanes.py``, one connection per request in flight, which a caller
raises with ``allow_connections``), the process's TLS context, redirects never followed (a secret must not reach
another origin), auth as an ``httpx.Auth`` whose secrets are blanked out of the HTTP
loggers while the client is open, pacing before each attempt, the run's circuit breaker
when given one, counts of what was seen, and the one retry policy (``retry.py``) around
each request. What differs per API is its hooks: ``_read`` (one answer: its value, a
refusal, or ``TransientHTTPError`` to try again; by default ``_transient``, ``_redirected``,
``_refused`` and ``_decode`` in turn), ``_gave_up`` (a transient answer that outlived the
retries) and ``_network_error``; ``send`` also takes a per-request ``pace`` and ``read``
(Shopify's cost budget and GraphQL errors).
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from connectors.http.auth import SecretAuth
from connectors.http.breaker import CircuitBreaker
from connectors.http.lanes import LanePool
from connectors.http.pacing import Pacer, Pacing
from connectors.http.redact import hide, unhide
from connectors.http.retry import RETRY_STATUSES, RetryPolicy, TransientHTTPError, retried
from connectors.http.tls import tls_context

log = logging.getLogger("shopsync.http")

#: how many paths' absolute URLs a client keeps (``HttpClient._url``)
_KEPT_URLS = 256
#: the auth a request uses when it names none: the client's own
CLIENT_AUTH: Any = httpx.USE_CLIENT_DEFAULT


@dataclass
class TransportStats:
    """What the client has seen, for callers that adapt their pace (the bulk writer)."""

    requests: int = 0
    attempts: int = 0
    throttled: int = 0
    server_errors: int = 0
    network_errors: int = 0
    latencies: list[float] = field(default_factory=list, repr=False)

    def answered(self, status: int, elapsed: float) -> None:
        self.latencies.append(elapsed)
        if len(self.latencies) > 1000:
            del self.latencies[:500]
        if status == 429:
            self.throttled += 1
        elif status >= 500:
            self.server_errors += 1


def lane_transport() -> httpx.AsyncHTTPTransport:
    """One lane of a client's pool: a transport of one kept-alive connection."""
    return httpx.AsyncHTTPTransport(
        verify=tls_context(), limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))


def default_transport(max_connections: int) -> LanePool:
    """At most ``max_connections`` requests at once, each on a connection of its own."""
    return LanePool(max_connections, lane_transport)


class HttpClient:
    """One API's ``httpx.AsyncClient`` under the retry policy; subclasses read its answers.

    ``secret`` (what the client says must not reach another origin: "the key") and
    ``error`` (the platform's error type, taking a message and ``status=``) serve the
    default messages; ``log`` is the subclass's logger.
    """

    secret = "the key"
    error: Callable[..., Exception] = Exception
    log = log

    def __init__(
        self,
        base_url: str,
        *,
        auth: SecretAuth | None = None,
        timeout: httpx.Timeout,
        headers: Mapping[str, str],
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 16,
        pacer: Pacing | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.pacer: Pacing = pacer if pacer is not None else Pacer(None)
        #: when given, every request of this client counts towards it (one per run)
        self.breaker = breaker
        self.stats = TransportStats()
        # hidden from the HTTP loggers until ``aclose``, or until the client is collected
        # unclosed (a configuration check builds one and drops it)
        secrets = auth.wire_forms() if auth is not None else []
        hide(secrets)
        self._unhide = weakref.finalize(self, unhide, secrets)
        self._urls: dict[str, httpx.URL] = {}
        #: the client's own pool; None when the caller passed a transport (a mock, a fake's)
        self._pool = default_transport(max_connections) if transport is None else None
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            auth=auth,
            transport=transport or self._pool,
            timeout=timeout,
            follow_redirects=False,
            headers=dict(headers),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()
        self._unhide()

    def allow_connections(self, count: int) -> None:
        """Let up to ``count`` requests go at once (never fewer than allowed already): a
        caller that keeps ``count`` in flight raises it so that none waits in the pool."""
        if self._pool is not None:
            self._pool.allow(count)

    @property
    def requests(self) -> int:
        """Requests sent, retries included."""
        return self.stats.attempts

    async def send(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | Any = CLIENT_AUTH,
        idempotent: bool = True,
        pace: Callable[[], Awaitable[None]] | None = None,
        read: Callable[[httpx.Response], Any] | None = None,
    ) -> Any:
        """Send ``method path`` (relative to the base URL) until an answer is read, the
        policy gives up, or the breaker opens (its ``CircuitOpenError`` propagates).

        ``pace`` waits before each attempt (default: the client's pacer); ``read`` reads one
        answer (default: ``_read``) and raises ``TransientHTTPError`` to try again.
        """
        self.stats.requests += 1
        pace = pace or self.pacer.wait
        read = read or (lambda response: self._read(method, path, response))

        async def attempt() -> Any:
            await pace()
            return read(await self._attempt(method, path, params, content, headers, auth))

        try:
            return await retried(self.retry, attempt, idempotent=idempotent, breaker=self.breaker)
        except TransientHTTPError as exc:
            raise self._gave_up(method, path, exc.response) from None
        except httpx.TransportError as exc:
            raise self._network_error(method, path, exc) from None

    async def _attempt(self, method: str, path: str, params: Any, content: bytes | None,
                       headers: Mapping[str, str] | None, auth: Any) -> httpx.Response:
        breaker = self.breaker
        if breaker is not None:
            breaker.check()
        self.stats.attempts += 1
        started = time.perf_counter()
        try:
            response = await self._http.request(method, self._url(path), params=params,
                                                content=content, headers=headers, auth=auth)
        except httpx.TransportError as exc:
            self.stats.network_errors += 1
            if breaker is not None:
                breaker.failure(type(exc).__name__)
                breaker.check()
            raise
        elapsed = time.perf_counter() - started
        # read and closed: the body stream httpx binds to its answer refers back to the answer
        # (a reference cycle: encode/httpx#3733, open as of 0.28.1), so the answer and its
        # request (a bulk write's JSON) waited for a full pass of the cyclic collector, which
        # a sync makes rarely (``pipelines.engine.collector``). Let go, they are freed as soon
        # as the caller drops them: a million orders' sync peaked at 441 MiB, not 500.
        response.stream = httpx.ByteStream(response.content)
        status = response.status_code
        self.stats.answered(status, elapsed)
        self.log.debug("%s %s %s -> %d in %.3fs", method, path, params or "", status, elapsed)
        if breaker is not None and status >= 500:
            breaker.failure(f"{status} {response.reason_phrase}".strip())
            breaker.check()
        elif breaker is not None:
            breaker.success()
        return response

    def _url(self, path: str) -> httpx.URL:
        """``path`` on the base URL, made once per path: httpx parses a path given as text
        and joins it to the base URL again on every request (a third of what building a
        request costs)."""
        url = self._urls.get(path)
        if url is None:
            if len(self._urls) >= _KEPT_URLS:  # paths naming ids: keep the recent ones only
                self._urls.clear()
            url = self._urls[path] = self._http.build_request("GET", path.lstrip("/")).url
        return url

    # the hooks ---------------------------------------------------------------------------

    def _read(self, method: str, path: str, response: httpx.Response) -> Any:
        """One answer: transient ones raise ``TransientHTTPError``, a redirect or a 4xx the
        platform's error; else the decoded body."""
        if self._transient(response):
            raise TransientHTTPError(response)
        if response.is_redirect:
            raise self._redirected(method, path, response)
        if response.status_code >= 400:
            raise self._refused(method, path, response)
        return self._decode(method, path, response)

    def _transient(self, response: httpx.Response) -> bool:
        return response.status_code in RETRY_STATUSES

    def _redirected(self, method: str, path: str, response: httpx.Response) -> Exception:
        return self.error(
            f"{method} {path} was redirected to {response.headers.get('location')!r}; redirects"
            f" are not followed ({self.secret} must not reach another origin): use the final"
            f" address as {self.address}", status=response.status_code)

    #: what the user configures the client's address as (in the redirect message)
    address = "the base URL"

    def _refused(self, method: str, path: str, response: httpx.Response) -> Exception:
        return self.error(f"{method} {path} answered {response.status_code}",
                          status=response.status_code)

    def _decode(self, method: str, path: str, response: httpx.Response) -> Any:
        """The JSON body; a page that is not JSON (a cache's or a plugin's HTML with 200)
        is worth another try."""
        try:
            return self.loads(response.content)
        except orjson.JSONDecodeError:
            raise TransientHTTPError(response) from None

    loads: Callable[[bytes], Any] = staticmethod(orjson.loads)

    def _gave_up(self, method: str, path: str, response: httpx.Response) -> Exception:
        return self.error(f"{method} {path}: the shop still answered {response.status_code}"
                          " after retries", status=response.status_code)

    def _network_error(self, method: str, path: str, exc: httpx.TransportError) -> Exception:
        return self.error(f"{method} {path}: network error after retries: {type(exc).__name__}")
