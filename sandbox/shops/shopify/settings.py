"""The fake Shopify shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from pydantic import Field

from sandbox.shops.settings import MOST, FakeShopSettings, Port

#: the Admin API access token the fake accepts unless told otherwise (see README.md)
DEFAULT_TOKEN = "shpat_shopsync_fake"
#: stable versions the fake serves; an older one falls forward to the oldest, as Shopify does
SUPPORTED_VERSIONS = ("2025-01", "2025-04", "2025-07", "2025-10", "2026-01")
FILES_PREFIX = "/__files__"


class FakeShopifySettings(FakeShopSettings):
    """The shared fields (``timezone``: search dates without an offset are read in it; the
    faults are transient failures: HTML 502, 503, 500, or a 200 with an
    INTERNAL_SERVER_ERROR GraphQL error, reproducible under the seed), no hosting rate limit
    (the cost bucket is Shopify's), and the Admin API's token, cost bucket and bulk jobs."""

    port: Port = 8789
    #: abandoned checkouts; None = a quarter of the orders
    checkouts: int | None = Field(default=None, ge=0, le=MOST)
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

    @property
    def checkout_count(self) -> int:
        return self.orders // 4 if self.checkouts is None else self.checkouts
