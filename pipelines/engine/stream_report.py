"""What one run of a stream did: counts per target resource, samples of a dry run, the
quality reports of its chunks."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from connectors.sources.base import Position
from pipelines.engine.quality import QualityReport

COUNTS = ("extracted", "quarantined", "unchanged", "pushed", "accepted", "rejected", "failed",
          "deleted", "parked")
SAMPLES_PER_RESOURCE = 3


@dataclass
class StreamReport:
    """What one run of a stream did, per target resource."""

    source: str
    stream: str
    dry_run: bool = False
    records: int = 0
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cursor: Position | None = None
    seconds: float = 0.0
    #: resource -> the quality report of each chunk that had items to check
    quality: dict[str, list[QualityReport]] = field(default_factory=dict)

    def add(self, resource: str, what: str, n: int = 1) -> None:
        counts = self.counts.get(resource)
        if counts is None:  # not setdefault: it would build a Counter on every call
            counts = self.counts[resource] = Counter()
        counts[what] += n

    def total(self, what: str) -> int:
        return sum(c[what] for c in self.counts.values())

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0

    def totals(self) -> dict[str, int | float]:
        """The run's figures as the ledger's run record keeps them."""
        totals: dict[str, int | float] = {what: self.total(what) for what in COUNTS}
        totals["records"] = self.records
        totals["seconds"] = round(self.seconds, 3)
        return totals
