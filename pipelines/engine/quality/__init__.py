"""Data quality of mapped items before they are sent: great-expectations suites per resource,
and the rows held back before them (decoding, mapping, bounds, item models) counted beside.

The engine's ``check_items`` runs the suites in a worker process (``worker.py``): importing
this package, or syncing, does not import great-expectations into the syncing process.
``check.check_items`` is the same check in the calling process.
"""

from __future__ import annotations

from pipelines.engine.quality.check import (
    KINDS,
    QualityReport,
    rules_markdown,
    summarize,
)
from pipelines.engine.quality.held import Held, HeldTally
from pipelines.engine.quality.worker import QualityUnavailable, check_items, prepare

__all__ = ["KINDS", "Held", "HeldTally", "QualityReport", "QualityUnavailable", "check_items",
           "prepare", "rules_markdown", "summarize"]
