"""Errors of the Marketing API client, grouped by what the caller can do about them.

    MarketingApiError            an answer the API gave (status, message, errors)
    ├── AuthenticationError      401/403: the key is wrong; fix the configuration
    ├── NotFoundError            404: the thing does not exist
    ├── RequestRejected          another 4xx: the request is wrong; never retried
    └── TransientError           408/429/5xx or the network, still failing after retries
    ClientConfigError            refused before any request: bad base URL or key format

None of them ever holds the API key.
"""

from __future__ import annotations

from typing import Any

import httpx


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
