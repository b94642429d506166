"""What a Shopify source needs to be told."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.http.urls import secure_url

#: the Admin API version the connector is written against; override with care (fields
#: change between versions: ``defaultEmailAddress`` needs 2025-04 or later)
API_VERSION = "2025-10"
_VERSION = re.compile(r"^(\d{4}-(01|04|07|10)|unstable)$")




class ShopifyConfig(BaseModel):
    """A shop's address and Admin API access token (a custom app's ``shpat_…`` token with
    ``read_orders``, ``read_all_orders``, ``read_customers``, ``read_products``,
    ``read_discounts``; abandoned checkouts also need the staff permission
    ``manage_abandoned_checkouts``). The token is a ``SecretStr``: never in a repr or a log."""

    model_config = ConfigDict(frozen=True)

    #: ``https://{shop}.myshopify.com`` (https required except on loopback)
    shop_url: str
    access_token: SecretStr
    api_version: str = API_VERSION
    #: nodes per page to start with (``first``); shrunk when a query would cost too much
    page_size: int = Field(default=100, ge=1, le=250)
    #: nodes of nested connections (line items, variants…) per page; the rest is followed up
    nested_page_size: int = Field(default=10, ge=1, le=250)
    #: a window with at least this many records is read by a bulk operation (0: never)
    bulk_threshold: int = Field(default=250, ge=0)
    #: a bulk operation reads at most about this many records: larger windows are split
    bulk_window_records: int = Field(default=100_000, ge=1)
    #: abandoned checkouts cannot be sorted by change time: a window of at most this many is
    #: read whole and sorted in memory (larger windows are split)
    sort_window_records: int = Field(default=5000, ge=1)
    bulk_poll_interval: float = Field(default=1.0, gt=0)
    bulk_poll_max_interval: float = Field(default=10.0, gt=0)
    #: how long to wait for a bulk operation (ours or one already running) before giving up
    bulk_timeout: float = Field(default=4 * 3600.0, gt=0)
    #: the most one query may request (Shopify: 1000 points)
    max_query_cost: int = Field(default=1000, ge=1)
    #: the longest the connector waits in total for the cost budget of one query
    max_throttle_wait: float = Field(default=600.0, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)

    @field_validator("shop_url")
    @classmethod
    def _shop_root(cls, value: str) -> str:
        text = value.strip()
        if "://" not in text:
            text = "https://" + text
        url = secure_url(text, shown=value, carrying="the access token travels",
                         label="shop URL",
                         invalid="must be the shop's address, like https://my-shop.myshopify.com")
        return str(url.copy_with(path="", query=None, fragment=None)).rstrip("/")

    @field_validator("api_version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError(f"API version {value!r} must look like 2025-10 (YYYY-01, -04, -07"
                             " or -10)")
        return value

    @property
    def endpoint(self) -> str:
        return f"{self.shop_url}/admin/api/{self.api_version}/graphql.json"
