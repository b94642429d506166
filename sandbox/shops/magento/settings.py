"""The fake Magento shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sandbox.shops.settings import MOST, HostedShopSettings

#: the integration token the fake accepts as a bearer token (documented in the README)
DEFAULT_TOKEN = "shopsync-fake-magento-token"
REST_PREFIX = "/rest"


class FakeMagentoSettings(HostedShopSettings):
    """The shared fields (port 8788), and Magento's store view, version switches, tokens."""

    #: active (not yet ordered) quotes; None: a quarter of the orders, at least 5
    carts: int | None = Field(default=None, ge=0, le=MOST)
    #: the store view code served at /rest/<code>/V1 (``default`` and ``all`` work too)
    store_code: str = "default"
    #: the store's locale timezone: the admin shows it, the REST API never uses it (UTC)
    timezone: str = "Europe/Berlin"
    currency: str = "EUR"
    #: a page past the end: "last" answers the last page again (Magento 2.0–2.3), "empty"
    #: answers no items (2.4)
    past_end: Literal["last", "empty"] = "last"
    #: Web API input limits (2.4.3+, off by default): the largest pageSize accepted, and 20
    #: items per page when pageSize is not given
    max_page_size: int | None = Field(default=None, ge=1)
    #: whether the integration token works as a standalone bearer token (2.4.4+: off unless
    #: the store enables it)
    integration_bearer: bool = True
    token: str = DEFAULT_TOKEN
    admin_username: str = "admin"
    admin_password: str = "shopsync-fake-admin1"
    #: lifetime of admin tokens from POST /V1/integration/admin/token (Magento: 4 hours)
    admin_token_ttl: int = Field(default=4 * 3600, ge=1)

    @property
    def active_carts(self) -> int:
        return self.carts if self.carts is not None else max(5, self.orders // 4)
