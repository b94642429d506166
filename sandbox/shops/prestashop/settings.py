"""The fake PrestaShop shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from sandbox.shops.settings import MOST, HostedShopSettings, Port

#: the webservice key the fake accepts (32 characters, like every PrestaShop key)
DEFAULT_KEY = "SHOPSYNCFAKEPRESTASHOPWEBSERVICE"
#: a second key that may read everything but customers and configurations
LIMITED_KEY = "SHOPSYNCLIMITEDKEYNOCUSTOMERS000"
API_PREFIX = "/api"
VERSIONS = {"1.7": "1.7.8.11", "8": "8.1.7"}


class FakePrestaSettings(HostedShopSettings):
    """The shared fields (``timezone`` is PS_TIMEZONE: every date the webservice shows is
    wall-clock time in it), and PrestaShop's version, languages and webservice key."""

    port: Port = 8790
    #: carts nobody ordered, on top of one cart per order (default: a third of the orders)
    abandoned_carts: int | None = Field(default=None, ge=0, le=MOST)
    #: "1.7": every value a string, an empty list a bare ``[]``; "8": integers for ids and
    #: counters, ``{"orders": []}`` when empty, null fields left out
    version: Literal["1.7", "8"] = "1.7"
    #: active languages (1 to 3): with one, multilingual fields collapse to plain strings
    languages: int = Field(default=2, ge=1, le=3)
    key: str = DEFAULT_KEY

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
