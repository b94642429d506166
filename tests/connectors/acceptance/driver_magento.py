"""The Magento fake and connector, for the acceptance suite."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import httpx

from connectors.http.retry import RetryPolicy
from connectors.http.tls import tls_context
from connectors.sources.magento import MagentoConnector
from sandbox.shops.magento.launch import RunningFakeMagento, start_in_thread
from tests.connectors.acceptance.fakes import FakeHandle, fake_args, rate_limit_args


@dataclass
class Handle(FakeHandle):
    shop: RunningFakeMagento
    #: statuses are Magento's own list and the configuration's: nothing to delete
    deletable: ClassVar[dict[str, str]] = {s: s for s in ("orders", "customers", "products",
                                                          "carts", "categories")}

    def connector(self, *, bad_credentials: bool = False, retry: RetryPolicy | None = None,
                  requests_per_second: float | None = None) -> MagentoConnector:
        token = "wrong-token" if bad_credentials else self.shop.token
        return MagentoConnector(self.shop.api_url, token, page_size=self.page_size, retry=retry,
                                requests_per_second=requests_per_second)

    def ids(self) -> set[str]:
        """Every order id: Magento lists every order, whatever its state."""
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids", verify=tls_context(),
                         headers={"authorization": f"Bearer {self.shop.token}"}).json()
        return {str(i) for i in body["ids"]}


class Driver:
    platform = "magento"
    stream = "orders"

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        args = fake_args(size=size, empty=empty, seed=seed, fault_rate=fault_rate)
        return Handle(start_in_thread(*args, *rate_limit_args(rate_limit)), self.stream,
                      page_size)


DRIVER = Driver()
