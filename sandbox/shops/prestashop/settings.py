"""The fake PrestaShop shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator

#: the webservice key the fake accepts (32 characters, like every PrestaShop key)
DEFAULT_KEY = "SHOPSYNCFAKEPRESTASHOPWEBSERVICE"
#: a second key that may read everything but customers and configurations
LIMITED_KEY = "SHOPSYNCLIMITEDKEYNOCUSTOMERS000"
API_PREFIX = "/api"
FAKE_PREFIX = "/__fake__"
VERSIONS = {"1.7": "1.7.8.11", "8": "8.1.7"}


class FakePrestaSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8790, ge=0, le=65535)
    seed: int = 0
    customers: int = Field(default=50, ge=0, le=1_000_000)
    orders: int = Field(default=200, ge=0, le=1_000_000)
    products: int = Field(default=30, ge=0, le=1_000_000)
    #: carts nobody ordered, on top of one cart per order (default: a third of the orders)
    abandoned_carts: int | None = Field(default=None, ge=0, le=1_000_000)
    #: PS_TIMEZONE: every date the webservice shows is wall-clock time in this zone
    timezone: str = "Europe/Paris"
    #: "1.7": every value a string, an empty list a bare ``[]``; "8": integers for ids and
    #: counters, ``{"orders": []}`` when empty, null fields left out
    version: Literal["1.7", "8"] = "1.7"
    #: active languages (1 to 3): with one, multilingual fields collapse to plain strings
    languages: int = Field(default=2, ge=1, le=3)
    #: requests per second allowed by a token bucket (burst = the same number); None = off
    rate_limit: float | None = Field(default=None, gt=0)
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    retry_after: int = Field(default=1, ge=0)
    key: str = DEFAULT_KEY

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (use an IANA name like Europe/Paris)")
        return value

    @field_validator("key")
    @classmethod
    def _key_format(cls, value: str) -> str:
        if len(value) != 32 or not value.isalnum():
            raise ValueError("a PrestaShop webservice key is 32 letters and digits")
        return value

    @property
    def ps_version(self) -> str:
        return VERSIONS[self.version]

    @property
    def bare_empty_list(self) -> bool:
        """1.7 answers an empty list as ``[]`` (PrestaShop issues 10172, 22760)."""
        return self.version == "1.7"
