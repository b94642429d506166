"""Errors of the Marketing API client, grouped by what the caller can do about them.

    MarketingApiError            an answer the API gave (status, message, errors)
    ├── AuthenticationError      401/403: the key is wrong; fix the configuration
    ├── NotFoundError            404: the thing does not exist
    ├── RequestRejected          another 4xx: the request is wrong; never retried
    ├── TransientError           408/429/5xx or the network, still failing after retries
    └── DestinationDown          every request failed for the circuit breaker's stretch:
                                 the API is down, nothing more is sent (stop, run later)
    ClientConfigError            refused before any request: bad base URL or key format

None of them ever holds the API key.
"""

from __future__ import annotations

from typing import Any

import httpx

from connectors.http.breaker import CircuitOpenError


class ClientConfigError(ValueError):
    """The client cannot be used as configured (nothing was sent)."""


class MarketingApiError(Exception):
    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        errors: list[str] | None = None,
        method: str = "",
        path: str = "",
        body: Any = None,
    ) -> None:
        self.message = message
        self.status_code = status_code
        self.errors = errors or [message]
        self.method = method
        self.path = path
        self.body = body
        where = f"{method} {path}: " if method else ""
        status = f"{status_code} " if status_code is not None else ""
        super().__init__(f"{where}{status}{message}")


class AuthenticationError(MarketingApiError):
    pass


class NotFoundError(MarketingApiError):
    pass


class RequestRejected(MarketingApiError):
    pass


class TransientError(MarketingApiError):
    pass


class DestinationDown(MarketingApiError):
    """The API has answered no request (network errors, 5xx) for the breaker's whole stretch.

    Not a ``TransientError``: items are not to be marked failed one batch after another,
    the run is to stop and say so. ``since`` is when the API last answered (UTC).
    """

    def __init__(self, cause: CircuitOpenError, *, method: str = "", path: str = "") -> None:
        self.since = cause.since
        self.open_after = cause.open_after
        self.last_error = cause.last_error
        self.server = cause.server
        super().__init__(str(cause), method=method, path=path)
        # the outage, not the one request that met the open breaker, is the message
        self.args = (str(cause),)

    def __str__(self) -> str:
        return self.message


def error_for(response: httpx.Response) -> MarketingApiError:
    """The typed error of a non-2xx answer, carrying the API's own message."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text[:500]
    message = ""
    errors: list[str] | None = None
    if isinstance(body, dict):
        message = str(body.get("message") or "")
        raw = body.get("errors")
        if isinstance(raw, list):
            errors = [str(e) for e in raw]
            message = message or "; ".join(errors)
    message = message or (body if isinstance(body, str) and body else response.reason_phrase)
    status = response.status_code
    cls: type[MarketingApiError]
    if status in (401, 403):
        cls = AuthenticationError
    elif status == 404:
        cls = NotFoundError
    elif status in (408, 429) or status >= 500:
        cls = TransientError
    else:
        cls = RequestRejected
    return cls(
        message,
        status_code=status,
        errors=errors,
        method=response.request.method,
        path=response.request.url.path,
        body=body,
    )
