"""What a WooCommerce source needs to be told."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.http.urls import api_root, secure_url

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
        url = secure_url(value.strip(), shown=value,
                         carrying="the consumer key and secret travel")
        return api_root(url, API_PATH)
