"""Data quality of mapped items before they are sent: great-expectations suites per resource.

Importing this package does not import great-expectations; the first ``check_items`` does.
"""

from __future__ import annotations

from pipelines.engine.quality.check import QualityReport, check_items, rules_markdown, summarize

__all__ = ["QualityReport", "check_items", "rules_markdown", "summarize"]
