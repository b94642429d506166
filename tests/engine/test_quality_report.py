"""The quality report: JSON-safe, summarized across chunks, with capped samples."""

from __future__ import annotations

import json

from pipelines.engine.quality import check_items, rules_markdown, summarize
from tests.engine.quality_support import KNOWN, keyed, valid


def test_the_report_is_json_safe_and_summarizes() -> None:
    items = valid("orders", 5)
    items[1]["currency"] = "XYZ"
    items[2]["amount_without_tax"] = items[2]["amount"] + 1
    first = check_items("orders", keyed(items), known=KNOWN)
    second = check_items("orders", [(f"j{i}", item) for i, item in enumerate(items[:2])],
                         known=KNOWN)
    json.dumps(first.results, allow_nan=False)
    summary = summarize([first, second])
    assert json.loads(json.dumps(summary, allow_nan=False)) == summary
    assert summary["rows"] == 7 and summary["blocked"] == 2
    by_name = {r["name"]: r for r in summary["rules"]}
    assert by_name["expect_column_values_to_match_regex(currency)"]["unexpected_count"] == 2
    assert by_name["expect_column_pair_values_a_to_be_greater_than_b(amount, amount_without_tax)"][
        "unexpected_count"] == 1
    markdown = rules_markdown(summary)
    assert "`expect_column_values_to_match_regex(currency)`" in markdown
    # the same item held back in two chunks (a backfill re-checks each) is one item
    assert summarize([first, first])["blocked"] == 1


def test_samples_are_capped() -> None:
    items = valid("manufacturers", 30)
    for item in items:
        item["created_at"] = "the day before"
    report = check_items("manufacturers", keyed(items))
    assert len(report.failures) == 30
    (result,) = [r for r in report.results if not r["success"]]
    assert result["unexpected_count"] == 30 and len(result["sample"]) == 20
