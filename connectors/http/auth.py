"""How each API is told who is asking, as ``httpx.Auth``: a header, HTTP Basic, or query
parameters, each holding its secrets as ``SecretStr`` until a request is sent.

httpx runs an auth flow on each request just before it goes out, so the secrets never sit
in a request the caller builds, a repr or an exception message. The request httpx sends
(and logs at INFO: method and URL) is the signed one, so secrets carried in a query string
show in that log line: every auth names the forms its secrets take on the wire
(``wire_forms``) and the client blanks them out of the HTTP loggers while it is open
(``redact.py``).
"""

from __future__ import annotations

import base64
from abc import ABC, abstractmethod
from collections.abc import Generator, Mapping

import httpx
from pydantic import SecretStr

from connectors.http.redact import wire_forms


class SecretAuth(httpx.Auth, ABC):
    """An auth whose secrets the client hides from the HTTP loggers while it is open."""

    @abstractmethod
    def wire_forms(self) -> list[str]:
        """The forms its secrets take on the wire (what the loggers must not show)."""

    @abstractmethod
    def sign(self, request: httpx.Request) -> None:
        """Put the credentials on ``request``."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.sign(request)
        yield request

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class HeaderSecret(SecretAuth):
    """One header carrying the secret, after an optional scheme: ``Authorization: Bearer …``
    (Magento), ``X-Shopify-Access-Token: …``, ``spm-api-key: …`` (the Marketing API)."""

    def __init__(self, header: str, secret: SecretStr, *, scheme: str = "") -> None:
        self.header = header
        self._secret = secret
        self._scheme = scheme

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.header!r})"

    def wire_forms(self) -> list[str]:
        return wire_forms(self._secret)

    def sign(self, request: httpx.Request) -> None:
        value = self._secret.get_secret_value()
        request.headers[self.header] = f"{self._scheme} {value}" if self._scheme else value


class BasicSecret(SecretAuth):
    """HTTP Basic: a user and a password (WooCommerce's key and secret), or a user alone with
    an empty password (PrestaShop's webservice key)."""

    def __init__(self, user: SecretStr, password: SecretStr | None = None) -> None:
        self._user = user
        self._password = password or SecretStr("")

    def _token(self) -> str:
        pair = f"{self._user.get_secret_value()}:{self._password.get_secret_value()}"
        return base64.b64encode(pair.encode()).decode()

    def wire_forms(self) -> list[str]:
        forms = wire_forms(self._user, self._password)
        return sorted({*forms, self._token()}) if self._user.get_secret_value() else forms

    def sign(self, request: httpx.Request) -> None:
        request.headers["authorization"] = f"Basic {self._token()}"


class QuerySecrets(SecretAuth):
    """Secrets as query parameters (WooCommerce's ``consumer_key``/``consumer_secret``,
    PrestaShop's ``ws_key``), for servers that strip the Authorization header."""

    def __init__(self, params: Mapping[str, SecretStr]) -> None:
        self._params = dict(params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self._params)!r})"

    def wire_forms(self) -> list[str]:
        return wire_forms(*self._params.values())

    def sign(self, request: httpx.Request) -> None:
        request.url = request.url.copy_merge_params(
            {name: secret.get_secret_value() for name, secret in self._params.items()})
