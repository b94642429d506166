"""The PrestaShop fake and connector, for the acceptance suite."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import httpx

from connectors.http.retry import RetryPolicy
from connectors.http.tls import tls_context
from connectors.sources.prestashop import PrestaShopConnector
from connectors.sources.prestashop.connector import STREAMS
from sandbox.shops.prestashop.launch import RunningFakeShop, start_in_thread
from tests.connectors.acceptance.fakes import FakeHandle, fake_args, rate_limit_args

#: 32 characters, so PrestaShop checks it (a shorter key fails its format check, code 18)
WRONG_KEY = "WRONGKEYWRONGKEYWRONGKEYWRONGKEY"


@dataclass
class Handle(FakeHandle):
    shop: RunningFakeShop
    #: every stream: each is a webservice resource the shop's admin can delete from
    deletable: ClassVar[dict[str, str]] = {s: s for s in STREAMS}

    def connector(self, *, bad_credentials: bool = False, retry: RetryPolicy | None = None,
                  requests_per_second: float | None = None) -> PrestaShopConnector:
        return PrestaShopConnector(self.shop.root, WRONG_KEY if bad_credentials else self.shop.key,
                                   page_size=self.page_size, retry=retry,
                                   requests_per_second=requests_per_second)

    def ids(self) -> set[str]:
        body = httpx.get(f"{self.shop.root}/__fake__/{self.stream}/ids", verify=tls_context(),
                         auth=(self.shop.key, "")).json()
        return {str(i) for i in body["ids"]}


class Driver:
    platform = "prestashop"
    stream = "orders"

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        args = fake_args(size=size, empty=empty, seed=seed, fault_rate=fault_rate)
        return Handle(start_in_thread(*args, *rate_limit_args(rate_limit)), self.stream,
                      page_size)


DRIVER = Driver()
