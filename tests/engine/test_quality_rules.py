"""The quality suites: each blocking rule holds back exactly the items that break it.

For every resource and every blocking rule of its suite, a batch of valid items plus one
item broken for that rule (two for uniqueness rules) must report the broken item(s) with the
rule's name, and nothing else. A table in ``quality_support.py`` says how to break each rule;
a rule added without a way to break it there fails
``test_every_blocking_rule_has_a_breaking_case``.
"""

from __future__ import annotations

import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources
from pipelines.engine.quality import check_items
from pipelines.engine.quality.suites import Rule, rules_for
from tests.engine.quality_support import KNOWN, blocking_cases, breaker, keyed, suite_of, valid


def test_every_resource_has_a_suite() -> None:
    assert {r for r in SYNC_RESOURCES if rules_for(r) is not None} == set(SYNC_RESOURCES)


def test_every_blocking_rule_has_a_breaking_case() -> None:
    missing = [f"{resource}: {rule.name}" for resource in sample_resources()
               for rule in suite_of(resource).rules
               if rule.blocking and "unique" not in rule.name and breaker(resource, rule) is None]
    assert not missing


@pytest.mark.parametrize("resource", sample_resources())
def test_valid_items_pass_every_rule(resource: str) -> None:
    report = check_items(resource, keyed(valid(resource, 4)), known=KNOWN)
    assert report.failures == {}
    assert report.warnings == {}
    assert all(r["success"] for r in report.results)
    assert report.rows == 4


@pytest.mark.parametrize(("resource", "rule", "after_models"), blocking_cases())
def test_an_item_breaking_a_blocking_rule_is_reported_with_its_name(
    resource: str, rule: Rule, after_models: bool
) -> None:
    *items, broken = valid(resource, 4)
    spec = SYNC_RESOURCES[resource]
    if "unique" in rule.name:  # a second item with the id (and lang) of the first
        broken[spec.id_field] = items[0][spec.id_field]
        expected = {"k0", "k3"}
    else:
        breaker(resource, rule)(broken)  # type: ignore[misc]
        expected = {"k3"}
    report = check_items(resource, keyed([*items, broken]), known=KNOWN,
                         after_models=after_models)
    assert report.failures == {key: [rule.name] for key in expected}
    (result,) = [r for r in report.results if r["name"] == rule.name]
    assert result["blocking"] and not result["success"]
    assert result["unexpected_count"] == len(expected)
    assert set(result["sample"]) == expected
    assert report.reasons("k3")[0].startswith(f"quality: {rule.name} — ")


def test_after_the_models_their_rules_are_skipped_and_reported_so() -> None:
    orders = valid("orders", 2)
    orders[0]["products"] = [{**orders[0]["products"][0], "quantity": -1}]  # the model's job
    orders[1]["currency"] = "XYZ"  # a shape the model lets through
    report = check_items("orders", keyed(orders), known=KNOWN, after_models=True)
    assert report.failures == {"k1": ["expect_column_values_to_match_regex(currency)"]}
    skipped = {r["name"] for r in report.results if r.get("skipped")}
    assert skipped == {r.name for r in suite_of("orders").rules if r.model_checked}
    assert "expect_column_values_to_be_between(amounts)" in skipped


def test_clean_and_dirty_batches_alternate_correctly() -> None:
    """The pass strategy adapts to the previous batch; the findings must not."""
    good = keyed(valid("statuses", 3))
    bad = [("b", sample_item("statuses", lang="zz"))]
    for batch, expected in [(good, {}), (bad, {"b": ["expect_column_values_to_match_regex(lang)"]}),
                            (good, {}), (good, {}), (bad, {"b": [
                                "expect_column_values_to_match_regex(lang)"]})]:
        assert check_items("statuses", batch).failures == expected
