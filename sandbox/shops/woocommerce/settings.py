"""The fake WooCommerce shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator

#: the credentials the fake accepts unless told otherwise (documented in the README)
DEFAULT_CONSUMER_KEY = "ck_shopsync_fake"
DEFAULT_CONSUMER_SECRET = "cs_shopsync_fake"
API_PREFIX = "/wp-json/wc/v3"
FAKE_PREFIX = "/__fake__"


class FakeWooSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8788, ge=0, le=65535)
    seed: int = 0
    customers: int = Field(default=50, ge=0, le=1_000_000)
    orders: int = Field(default=200, ge=0, le=1_000_000)
    products: int = Field(default=30, ge=0, le=1_000_000)
    #: the WordPress site timezone: naive filter dates are read in it unless dates_are_gmt
    timezone: str = "Europe/Paris"
    #: requests per second allowed by a token bucket (burst = the same number); None = off
    rate_limit: float | None = Field(default=None, gt=0)
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    retry_after: int = Field(default=1, ge=0)
    consumer_key: str = DEFAULT_CONSUMER_KEY
    consumer_secret: str = DEFAULT_CONSUMER_SECRET
    currency: str = "EUR"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (use an IANA name like Europe/Paris)")
        return value
