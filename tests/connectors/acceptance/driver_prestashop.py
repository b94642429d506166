"""The PrestaShop fake and connector, for the acceptance suite."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from connectors.http.retry import RetryPolicy
from connectors.sources.prestashop import PrestaShopConnector
from sandbox.shops.prestashop.launch import RunningFakeShop, attach, launch

#: 32 characters, so PrestaShop checks it (a shorter key fails its format check, code 18)
WRONG_KEY = "WRONGKEYWRONGKEYWRONGKEYWRONGKEY"


@dataclass
class Handle:
    shop: RunningFakeShop
    stream: str
    page_size: int

    def connector(self, *, bad_credentials: bool = False, retry: RetryPolicy | None = None,
                  requests_per_second: float | None = None) -> PrestaShopConnector:
        return PrestaShopConnector(self.shop.root, WRONG_KEY if bad_credentials else self.shop.key,
                                   page_size=self.page_size, retry=retry,
                                   requests_per_second=requests_per_second)

    def throttled(self) -> int:
        return int(self.shop.fake().get("/stats").json()["throttled"])

    def ids(self) -> set[str]:
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids",
                         auth=(self.shop.key, "")).json()
        return {str(i) for i in body["ids"]}

    def stop(self) -> None:
        self.shop.stop()


class Driver:
    platform = "prestashop"
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
