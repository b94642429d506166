"""The fake Magento shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator

#: the integration token the fake accepts as a bearer token (documented in the README)
DEFAULT_TOKEN = "shopsync-fake-magento-token"
DEFAULT_ADMIN_USERNAME = "admin"
DEFAULT_ADMIN_PASSWORD = "shopsync-fake-admin1"
REST_PREFIX = "/rest"
FAKE_PREFIX = "/__fake__"
MAGENTO_VERSION = "2.4.7-p3"


class FakeMagentoSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8788, ge=0, le=65535)
    seed: int = 0
    customers: int = Field(default=50, ge=0, le=1_000_000)
    orders: int = Field(default=200, ge=0, le=1_000_000)
    products: int = Field(default=30, ge=0, le=1_000_000)
    #: active (not yet ordered) quotes; None: a quarter of the orders, at least 5
    carts: int | None = Field(default=None, ge=0, le=1_000_000)
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
    admin_username: str = DEFAULT_ADMIN_USERNAME
    admin_password: str = DEFAULT_ADMIN_PASSWORD
    #: lifetime of admin tokens from POST /V1/integration/admin/token (Magento: 4 hours)
    admin_token_ttl: int = Field(default=4 * 3600, ge=1)
    #: requests per second allowed by a token bucket (burst = the same number); None = off
    rate_limit: float | None = Field(default=None, gt=0)
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    retry_after: int = Field(default=1, ge=0)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (use an IANA name like Europe/Berlin)")
        return value

    @property
    def active_carts(self) -> int:
        return self.carts if self.carts is not None else max(5, self.orders // 4)
