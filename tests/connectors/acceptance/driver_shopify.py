"""The Shopify fake and connector, for the acceptance suite.

The cost bucket is made large for the ordinary cases (paged reads cost points; the suite
tests reading, not waiting) and small for ``rate_limit``: ``R`` requests per second become a
bucket of ``50·R`` points, so pages wait for it and a page dearer than it is made smaller,
refilled at ``500·R`` points per second (the waits are what is tested, not their length).
Bulk operations are off: the suite walks pages, where ties cross page boundaries (the
connector's own tests cover bulk reads)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import httpx

from connectors.http.retry import RetryPolicy
from connectors.http.tls import tls_context
from connectors.sources.shopify import ShopifyConnector
from sandbox.shops.shopify.launch import RunningFakeShopify, start_in_thread
from tests.connectors.acceptance.fakes import FakeHandle, fake_args


@dataclass
class Handle(FakeHandle):
    """Shopify's limit is the cost bucket: ``throttled()`` counts its THROTTLED answers and
    ``drain()`` empties it for the next query."""

    shop: RunningFakeShopify
    #: statuses (an enum) and manufacturers (the vendors products name) have nothing to delete
    deletable: ClassVar[dict[str, str]] = {
        "orders": "orders", "customers": "customers", "products": "products",
        "categories": "collections", "vouchers": "discounts", "carts": "checkouts"}

    def connector(self, *, bad_credentials: bool = False,
                  retry: RetryPolicy | None = None) -> ShopifyConnector:
        token = "shpat_wrong" if bad_credentials else self.shop.token
        return ShopifyConnector(self.shop.root, token, page_size=self.page_size, retry=retry,
                                bulk_threshold=0)

    def ids(self) -> set[str]:
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids", verify=tls_context(),
                         headers={"X-Shopify-Access-Token": self.shop.token}).json()
        return {str(i) for i in body["ids"]}

    def drain(self) -> None:
        self.shop.fake().post("/bucket", json={"available": 0}).raise_for_status()


class Driver:
    platform = "shopify"
    stream = "orders"
    not_applicable: ClassVar[dict[str, str]] = {
        "pacing": "Shopify is paced by its cost budget, always on: its own tests show that it"
                  " waits instead of being throttled (tests/connectors/shopify)",
    }

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        args = fake_args(size=size, empty=empty, seed=seed, fault_rate=fault_rate)
        points = 50 * rate_limit if rate_limit else 1_000_000
        restore = 10 * points if rate_limit else points
        args += ["--bucket-size", str(points), "--restore-rate", str(restore)]
        return Handle(start_in_thread(*args), self.stream, page_size)


DRIVER = Driver()
