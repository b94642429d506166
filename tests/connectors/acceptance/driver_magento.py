"""The Magento fake and connector, for the acceptance suite."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from connectors.http.retry import RetryPolicy
from connectors.sources.magento import MagentoConnector
from sandbox.shops.magento.launch import RunningFakeMagento, attach, launch


@dataclass
class Handle:
    shop: RunningFakeMagento
    stream: str
    page_size: int

    def connector(self, *, bad_credentials: bool = False, retry: RetryPolicy | None = None,
                  requests_per_second: float | None = None) -> MagentoConnector:
        token = "wrong-token" if bad_credentials else self.shop.token
        return MagentoConnector(self.shop.api_url, token, page_size=self.page_size, retry=retry,
                                requests_per_second=requests_per_second)

    def throttled(self) -> int:
        return int(self.shop.fake().get("/stats").json()["throttled"])

    def ids(self) -> set[str]:
        """Every order id: Magento lists every order, whatever its state."""
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids",
                         headers={"authorization": f"Bearer {self.shop.token}"}).json()
        return {str(i) for i in body["ids"]}

    def stop(self) -> None:
        self.shop.stop()


class Driver:
    platform = "magento"
    stream = "orders"

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        args = ["--orders", "0" if empty else str(size), "--customers", "0" if empty else "10",
                "--products", "0" if empty else "5", "--seed", str(seed)]
        if rate_limit:
            args += ["--rate-limit", str(rate_limit)]
        if fault_rate:
            args += ["--fault-rate", str(fault_rate), "--retry-after", "0"]
        return Handle(attach(launch(*args)), self.stream, page_size)


DRIVER = Driver()
