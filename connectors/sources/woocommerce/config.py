"""What a WooCommerce source needs to be told."""

from __future__ import annotations

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.http.urls import is_loopback as _is_loopback

API_PATH = "/wp-json/wc/v3"




class WooCommerceConfig(BaseModel):
    """A shop's address and REST API key (WooCommerce → Settings → Advanced → REST API; read
    access is enough). The secrets are ``SecretStr``: they never show in a repr or a log."""

    model_config = ConfigDict(frozen=True)

    #: the site (``https://shop.example``) or its API root (``…/wp-json/wc/v3``)
    base_url: str
    consumer_key: SecretStr
    consumer_secret: SecretStr
    #: send the key as ``consumer_key``/``consumer_secret`` query parameters instead of HTTP
    #: Basic, for servers that strip the Authorization header ("Consumer key is missing")
    query_string_auth: bool = False
    page_size: int = Field(default=100, ge=1, le=100)
    #: the customers endpoint lists only this role by default; "all" lists every user
    customer_role: str = "customer"
    #: also read trashed orders and products (status=trash), so deletions reach the target
    include_trash: bool = True
    variation_concurrency: int = Field(default=4, ge=1, le=32)
    #: pace requests to this many per second (a host's or WAF's limit); None: no pacing
    requests_per_second: float | None = Field(default=None, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _api_root(cls, value: str) -> str:
        """The API root without a trailing slash; https required except on loopback."""
        url = httpx.URL(value.strip())
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base URL {value!r} must be an http(s) URL of the shop")
        if url.scheme != "https" and not _is_loopback(url.host):
            raise ValueError(
                f"base URL {value!r} must use https: the consumer key and secret travel with"
                " every request (plain http is allowed on loopback only)")
        path = url.path.rstrip("/")
        if not path.endswith(API_PATH):
            path += API_PATH
        return str(url.copy_with(path=path, query=None, fragment=None))
