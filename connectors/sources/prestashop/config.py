"""What a PrestaShop source needs to be told."""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.http.urls import api_root, secure_url

API_PATH = "/api"




def check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {value!r}: use the shop's PS_TIMEZONE, an IANA"
                         " name like Europe/Paris") from None
    return value


class PrestaShopConfig(BaseModel):
    """A shop's address and webservice key (Back Office → Advanced Parameters → Webservice;
    GET on the resources read is enough). The key is a ``SecretStr``: it never shows in a
    repr or a log."""

    model_config = ConfigDict(frozen=True)

    #: the shop (``https://shop.example``) or its webservice root (``…/api``)
    base_url: str
    key: SecretStr
    #: PS_TIMEZONE: the webservice shows shop-local times without an offset; None reads
    #: PS_TIMEZONE from the ``configurations`` resource (the key then needs GET on it)
    timezone: str | None = None
    #: "1.7" or "8": the connector reads both (strings or numbers, both empty-list forms);
    #: given, a shop answering with another major version is logged as a warning
    version: Literal["1.7", "8"] | None = None
    #: ISO codes of the languages to read (default: every active language of the shop)
    languages: tuple[str, ...] | None = None
    #: multishop: read this shop's context (``id_shop``)
    id_shop: int | None = Field(default=None, ge=1)
    #: send the key as ``ws_key`` instead of HTTP Basic, for Apache CGI/FastCGI setups that
    #: strip the Authorization header (PrestaShop then keeps answering 401)
    ws_key_in_query: bool = False
    page_size: int = Field(default=100, ge=1, le=1000)
    #: ids per OR filter (``filter[id]=[1|2|…]``) when looking records up: bounds URL length
    lookup_size: int = Field(default=100, ge=1, le=500)
    #: pace requests to this many per second (a host's or WAF's limit); None: no pacing
    requests_per_second: float | None = Field(default=None, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _api_root(cls, value: str) -> str:
        """The webservice root without a trailing slash; https required except on loopback."""
        url = secure_url(value.strip(), shown=value, carrying="the webservice key travels")
        return api_root(url, API_PATH)

    @field_validator("key")
    @classmethod
    def _key_format(cls, value: SecretStr) -> SecretStr:
        secret = value.get_secret_value().strip()
        if len(secret) != 32 or not secret.isalnum():
            raise ValueError("a PrestaShop webservice key is 32 letters and digits (PrestaShop"
                             " would answer 401, code 18: invalid authentication key format)")
        return SecretStr(secret)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        return None if value is None else check_timezone(value)

    @field_validator("languages")
    @classmethod
    def _codes(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and not value:
            raise ValueError("give at least one language code, or leave it out for all")
        return None if value is None else tuple(v.strip().lower() for v in value)

    @property
    def shop_url(self) -> str:
        """The shop's front office: the webservice root without ``/api``."""
        return self.base_url.removesuffix(API_PATH)
