"""What the drivers of the fake shops served over HTTP share: the fake's command-line
arguments for a case, and the handle's view of the fake (its 429s, stopping it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def fake_args(*, size: int, empty: bool, seed: int, fault_rate: float) -> list[str]:
    """A shop of ``size`` orders (10 customers, 5 products), or an empty one, with injected
    faults answered at once (``Retry-After: 0``)."""
    args = ["--orders", "0" if empty else str(size), "--customers", "0" if empty else "10",
            "--products", "0" if empty else "5", "--seed", str(seed)]
    if fault_rate:
        args += ["--fault-rate", str(fault_rate), "--retry-after", "0"]
    return args


def rate_limit_args(rate_limit: float | None) -> list[str]:
    """A host's limit of ``rate_limit`` requests per second (none when None)."""
    return ["--rate-limit", str(rate_limit)] if rate_limit else []


@dataclass
class FakeHandle:
    """A started fake shop (``shop``: its launcher's running handle) and the stream read."""

    shop: Any
    stream: str
    page_size: int

    def throttled(self) -> int:
        """The 429s the fake answered so far."""
        return int(self.shop.fake().get("/stats").json()["throttled"])

    def stop(self) -> None:
        self.shop.stop()
