"""Data quality of mapped items before they are sent: great-expectations suites per resource,
and the rows held back before them (decoding, mapping, bounds, item models) counted beside.

Importing this package does not import great-expectations; the first ``check_items`` does.
"""

from __future__ import annotations

from pipelines.engine.quality.check import (
    KINDS,
    Pool,
    QualityReport,
    check_chunk,
    check_items,
    rules_markdown,
    summarize,
)
from pipelines.engine.quality.held import Held, HeldTally

__all__ = ["KINDS", "Held", "HeldTally", "Pool", "QualityReport", "check_chunk", "check_items",
           "rules_markdown", "summarize"]
