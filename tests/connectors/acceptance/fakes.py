"""What the drivers of the fake shops served over HTTP share: the fake's command-line
arguments for a case, and the handle's view of the fake (what it counted, draining its rate
limit, stopping it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


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
    #: the streams whose records can be deleted at the source -> the fake's resource holding
    #: them (each driver names its own: none named fails the deletion case)
    deletable: ClassVar[dict[str, str]] = {}
    #: the query of the fake's DELETE that deletes for good (not a soft delete or a trash)
    delete_params: ClassVar[dict[str, str]] = {}

    def delete(self, stream: str, record_id: str) -> None:
        """Delete a record of ``stream`` at the source for good, as the shop's admin would."""
        self.shop.fake().delete(f"/{self.deletable[stream]}/{record_id}",
                                params=self.delete_params).raise_for_status()

    def requests(self) -> int:
        """The API requests the fake answered so far, refused ones included."""
        return int(self.shop.fake().get("/stats").json().get("requests", 0))

    def throttled(self) -> int:
        """The requests the fake's rate limit refused so far."""
        return int(self.shop.fake().get("/stats").json().get("throttled", 0))

    def drain(self) -> None:
        """Spend the fake's rate limit as other clients would just before the next request:
        that request is refused however late it comes (refilling resumes after it)."""
        self.shop.fake().post("/rate-limit", json={"tokens": 0}).raise_for_status()

    def stop(self) -> None:
        self.shop.stop()
