"""The WooCommerce fake and connector, for the acceptance suite."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import httpx

from connectors.http.retry import RetryPolicy
from connectors.http.tls import tls_context
from connectors.sources.woocommerce import WooCommerceConnector
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.connectors.acceptance.fakes import FakeHandle, fake_args, rate_limit_args


@dataclass
class Handle(FakeHandle):
    shop: RunningFakeShop
    #: statuses are WooCommerce's own list: nothing to delete
    deletable: ClassVar[dict[str, str]] = {s: s for s in ("orders", "products", "coupons",
                                                          "customers", "categories")}
    #: for good: without force, orders, products and coupons go to the trash
    delete_params: ClassVar[dict[str, str]] = {"force": "true"}

    def connector(self, *, bad_credentials: bool = False, retry: RetryPolicy | None = None,
                  requests_per_second: float | None = None) -> WooCommerceConnector:
        secret = "cs_wrong" if bad_credentials else self.shop.secret
        return WooCommerceConnector(self.shop.root, self.shop.key, secret,
                                    page_size=self.page_size, retry=retry,
                                    requests_per_second=requests_per_second)

    def ids(self) -> set[str]:
        """Every id of the stream the connector must return: trashed orders too, block
        checkout drafts not (they are carts in the making, not orders)."""
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids", verify=tls_context(),
                         params={"exclude_status": "checkout-draft"},
                         auth=(self.shop.key, self.shop.secret)).json()
        return {str(i) for i in body["ids"]}


class Driver:
    platform = "woocommerce"
    stream = "orders"

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        args = fake_args(size=size, empty=empty, seed=seed, fault_rate=fault_rate)
        return Handle(start_in_thread(*args, *rate_limit_args(rate_limit)), self.stream,
                      page_size)


DRIVER = Driver()
