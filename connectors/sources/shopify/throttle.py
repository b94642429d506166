"""The cost budget of the app on one shop, kept from the ``extensions.cost`` of every answer,
so that a query waits *before* it would be throttled.

Shopify's GraphQL limit is a leaky bucket of points per app and shop: each query is checked
against its *requested* cost (the worst case), charged its actual cost, and the bucket
refills at ``restoreRate`` points per second. Every answer reports the bucket's state; from
it, and the time since, the budget estimates what is available now and how long a query of
a given cost must wait. Budgets are shared by every connector of the process on the same
shop, since they share the bucket. A ``THROTTLED`` answer (HTTP 200) only corrects the
estimate: it is a wait, never a failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CostBudget:
    maximum: float | None = None
    available: float | None = None
    rate: float | None = None
    at: float = field(default_factory=time.monotonic)
    #: totals, for reports and the benchmark
    requested: int = 0
    spent: int = 0
    throttled: int = 0
    waited: float = 0.0
    #: the time the bucket refills by (tests pass their own to check the arithmetic)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def level(self) -> float | None:
        """Points available now, as estimated (None until an answer has said)."""
        if self.available is None or self.rate is None or self.maximum is None:
            return None
        elapsed = self.clock() - self.at
        return min(self.maximum, self.available + elapsed * self.rate)

    def wait_for(self, cost: float) -> float:
        """Seconds to wait until a query requesting ``cost`` points fits."""
        level = self.level()
        if level is None or self.rate is None or cost <= level:
            return 0.0
        return (cost - level) / self.rate

    def reserve(self, cost: float) -> None:
        """Count ``cost`` as taken until the answer says what is left (concurrent queries
        of this process then wait for each other instead of all being throttled)."""
        level = self.level()
        if level is not None:
            self.available, self.at = level - cost, self.clock()

    def update(self, cost: dict[str, Any] | None) -> None:
        """Take in an answer's ``extensions.cost``."""
        if not cost:
            return
        status = cost.get("throttleStatus") or {}
        if status.get("currentlyAvailable") is not None:
            self.maximum = float(status["maximumAvailable"])
            self.available = float(status["currentlyAvailable"])
            self.rate = float(status["restoreRate"])
            self.at = self.clock()
        if cost.get("actualQueryCost") is not None:
            self.requested += int(cost.get("requestedQueryCost") or 0)
            self.spent += int(cost["actualQueryCost"])


_BUDGETS: dict[str, CostBudget] = {}


def budget_for(shop_url: str) -> CostBudget:
    """The one budget of this process for a shop (the bucket is per app and shop)."""
    return _BUDGETS.setdefault(shop_url, CostBudget())
