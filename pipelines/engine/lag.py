"""Visibility lag: how long an accepted item took to show at the destination, as far as
read-backs a moment apart can tell, and the figures a person reads of it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


def seconds_between(since: datetime, until: datetime) -> float:
    return max(0.0, (until - since).total_seconds())


@dataclass(frozen=True)
class VisibilityLag:
    """How long one item took to become visible after it was accepted, as far as read-backs
    can tell: between ``low`` (the last read-back that did not show it; 0 if none did) and
    ``high`` (the first that did) seconds."""

    low: float
    high: float

    @classmethod
    def of(cls, accepted_at: datetime, first_seen: datetime,
           unseen_at: datetime | None) -> VisibilityLag:
        high = seconds_between(accepted_at, first_seen)
        low = 0.0 if unseen_at is None else min(seconds_between(accepted_at, unseen_at), high)
        return cls(round(low, 3), round(high, 3))

    @property
    def resolution(self) -> float:
        """How wide the read-backs leave it: first seen − max(accepted, last unseen check)."""
        return round(self.high - self.low, 3)

    @property
    def measured_finely(self) -> bool:
        return measured_finely(self.high, self.resolution)


def measured_finely(upper: float, resolution: float) -> bool:
    """A lag bound says something about the lag itself when the read-backs were no further
    apart than the lag is long (resolution ≤ its lower bound); otherwise it mostly tells how
    far apart they were."""
    return resolution <= upper - resolution


def seconds_text(value: float | None) -> str:
    """Seconds as a person reads them: hundredths below a second, tenths above."""
    if value is None:
        return "-"
    return f"{value:.2f} s" if value < 1 else f"{value:.1f} s"


def describe_lag(upper: float | None, resolution: float | None) -> str:
    """A visibility-lag figure as a person reads it: an upper bound and its resolution."""
    if upper is None or resolution is None:
        return "-"
    fine = "" if measured_finely(upper, resolution) else ", not measured finely"
    return f"≤ {seconds_text(upper)} (resolution {seconds_text(resolution)}{fine})"


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)
