"""The fake Shopify shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator

#: the Admin API access token the fake accepts unless told otherwise (see README.md)
DEFAULT_TOKEN = "shpat_shopsync_fake"
#: stable versions the fake serves; an older one falls forward to the oldest, as Shopify does
SUPPORTED_VERSIONS = ("2025-01", "2025-04", "2025-07", "2025-10", "2026-01")
FAKE_PREFIX = "/__fake__"
FILES_PREFIX = "/__files__"


class FakeShopifySettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=8789, ge=0, le=65535)
    seed: int = 0
    customers: int = Field(default=50, ge=0, le=1_000_000)
    orders: int = Field(default=200, ge=0, le=1_000_000)
    products: int = Field(default=30, ge=0, le=1_000_000)
    #: abandoned checkouts; None = a quarter of the orders
    checkouts: int | None = Field(default=None, ge=0, le=1_000_000)
    #: the shop's IANA timezone: search dates without an offset are read in it
    timezone: str = "Europe/Paris"
    currency: str = "EUR"
    token: str = DEFAULT_TOKEN
    #: the cost bucket of the app on this shop (points) and how fast it refills (points/s);
    #: the defaults are the current Standard plan's
    bucket_size: float = Field(default=2000.0, gt=0)
    restore_rate: float = Field(default=100.0, gt=0)
    #: the most one query may request (Shopify: 1000)
    max_query_cost: int = Field(default=1000, ge=1)
    #: bulk operations: seconds before a job runs, and how many objects it writes per second
    bulk_latency: float = Field(default=0.3, ge=0)
    bulk_objects_per_second: float = Field(default=5000.0, gt=0)
    #: concurrent bulk query operations per app and shop (1 before API 2026-01, then 5)
    bulk_concurrency: int = Field(default=1, ge=1, le=5)
    #: share of API requests answered with a transient failure (HTML 502, 503, 500, or a
    #: 200 with an INTERNAL_SERVER_ERROR GraphQL error), reproducible under the seed
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    retry_after: int = Field(default=1, ge=0)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (use an IANA name like Europe/Paris)")
        return value

    @property
    def checkout_count(self) -> int:
        return self.orders // 4 if self.checkouts is None else self.checkouts
