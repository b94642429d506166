"""What a Magento 2 / Adobe Commerce source needs to be told."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from connectors.http.urls import secure_url

_STORE_CODE = re.compile(r"^[a-z0-9_]+$", re.IGNORECASE)




def split_rest_url(value: str, store_code: str | None) -> tuple[str, str]:
    """``(…/rest/<store_code>, store_code)`` from a shop address or its REST root.

    ``https://shop.example`` gets ``/rest/<store_code or default>``; an address that already
    holds ``/rest/<code>`` keeps it, and a different ``store_code`` beside it is an error.
    """
    url = secure_url(value.strip(), shown=value, carrying="the bearer token travels")
    path = url.path.rstrip("/")
    path = path.removesuffix("/V1")
    root, marker, code = path.rpartition("/rest")
    if marker and (code == "" or code.count("/") == 1):
        found = code.strip("/") or None
        if found and store_code and found != store_code:
            raise ValueError(f"base URL {value!r} names store code {found!r} but store_code is"
                             f" {store_code!r}: give one or make them agree")
        code = found or store_code or "default"
    else:
        root, code = path, store_code or "default"
    if not _STORE_CODE.match(code):
        raise ValueError(f"store code {code!r} is not a Magento store code (letters, digits, _)")
    return str(url.copy_with(path=f"{root}/rest/{code}", query=None, fragment=None)), code


class MagentoConfig(BaseModel):
    """A shop's REST address and an access token. The token is a ``SecretStr``: it never
    shows in a repr or a log. An integration token (System → Extensions → Integrations) never
    expires but Magento 2.4.4+ accepts it as a bearer token only when *Allow OAuth Access
    Tokens to be used as standalone Bearer tokens* is on; an admin token lasts 4 hours."""

    model_config = ConfigDict(frozen=True)

    #: ``…/rest/<store_code>`` (or the shop's address: ``/rest/<store_code>`` is added)
    base_url: str
    token: SecretStr
    #: the store view whose values are read (``default``, a store view code, or ``all``)
    store_code: str = "default"
    #: items per request; Magento's input limits (when enabled) cap it at 300
    page_size: int = Field(default=100, ge=1, le=300)
    #: read only active quotes (carts not yet ordered); by default ordered ones are read too,
    #: so that a cart's conversion reaches the target
    active_carts_only: bool = False
    #: fetch the child products of configurable products (one request per configurable)
    variations: bool = True
    variation_concurrency: int = Field(default=4, ge=1, le=32)
    #: labels of order statuses made in the admin (code -> label), beside Magento's defaults
    order_statuses: dict[str, str] = Field(default_factory=dict)
    #: pace requests to this many per second (a host's or WAF's limit); None: no pacing
    requests_per_second: float | None = Field(default=None, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _rest_root(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("base_url"), str):
            url, code = split_rest_url(data["base_url"], data.get("store_code"))
            data = {**data, "base_url": url, "store_code": code}
        return data
