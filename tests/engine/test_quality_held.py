"""Rows held back before the suite (model errors, failed mappings, values beyond limits,
unreadable records) and how they add up with the checked rows in one summary.
"""

from __future__ import annotations

import json

from pipelines.engine.quality import KINDS, HeldTally, check_items, rules_markdown, summarize
from pipelines.engine.quality import held as held_rules
from tests.engine.quality_support import KNOWN, keyed, valid

# rows held back before the suite --------------------------------------------------------


def test_model_errors_are_rules_by_field_and_list_indexes_are_one_rule() -> None:
    held = held_rules.model_refused([
        "customer.email: 'not-an-email' is not a well-formed email address",
        "products[0].price: Input should be greater than or equal to 0",
        "products[3].price: Input should be greater than or equal to 0"])
    assert held.kind == "model"
    assert list(held.rules) == ["model: customer.email", "model: products[].price"]
    assert held.rules["model: products[].price"].startswith("products[0].price: ")
    assert list(held_rules.model_refused(["item: must be a JSON object"]).rules) == [
        "model: item"]


def test_carried_errors_tell_a_failed_mapping_from_values_and_unreadable_records() -> None:
    fields = {"order_id", "amount", "products"}
    mapping = held_rules.carried_errors(
        [f"orders record '7'{held_rules.CANNOT_MAP}KeyError: 'warehouse'"], fields)
    assert (mapping.kind, list(mapping.rules)) == ("mapping", ["mapping: KeyError"])
    values = held_rules.carried_errors(["amount: 1e10000000 is beyond the numbers the API"
                                        " takes", "products[1].quantity: ² is no number"], fields)
    assert (values.kind, list(values.rules)) == (
        "limit", ["limits: amount", "limits: products[].quantity"])
    unreadable = held_rules.carried_errors(
        ["orders/orders-2025.jsonl:4: not JSON", "orders row '12': the row cannot be read"],
        fields)
    assert (unreadable.kind, list(unreadable.rules)) == ("limit", [held_rules.UNREADABLE])


def test_held_rows_and_checked_rows_add_up_in_one_summary() -> None:
    """What the Dagster check shows: every row of the run, every rule of every stage."""
    items = valid("orders", 4)
    items[3]["currency"] = "XYZ"
    checked = check_items("orders", keyed(items), known=KNOWN, after_models=True)
    tally = HeldTally("orders")
    for key, email in (("m1", "not-an-email"), ("m2", "nobody")):
        tally.add(key, held_rules.model_refused(
            [f"customer.email: '{email}' is not a well-formed email address"]))
    tally.add("m1", held_rules.model_refused(["amount: counted once"]))  # a key counts once
    tally.add("x1", held_rules.bounds_broken({"text length": "reference: 1,000,001 characters"}))
    held = tally.report()
    assert held is not None and tally.report() is not None

    summary = summarize([held, checked])

    assert json.loads(json.dumps(summary, allow_nan=False)) == summary
    assert (summary["rows"], summary["checked"], summary["blocked"]) == (7, 4, 4)
    assert summary["held"] == {"limit": 1, "mapping": 0, "model": 2, "suite": 1}
    kinds = [rule["kind"] for rule in summary["rules"]]
    assert kinds == sorted(kinds, key=KINDS.index)  # the stages in the engine's order
    by_name = {rule["name"]: rule for rule in summary["rules"]}
    email = by_name["model: customer.email"]
    assert (email["unexpected_count"], email["sample"], email["blocking"]) == (2, ["m1", "m2"],
                                                                               True)
    assert email["description"] == "customer.email: 'not-an-email' is not a well-formed email" \
                                   " address"
    assert by_name["limits: text length"]["kind"] == "limit"
    assert by_name["expect_column_values_to_match_regex(currency)"]["kind"] == "suite"
    markdown = rules_markdown(summary)
    assert "| model | `model: customer.email` | yes | 2 | `m1`, `m2` |" in markdown
    assert markdown.splitlines()[0].startswith("| kind | rule |")


def test_a_chunk_without_held_rows_adds_no_report() -> None:
    assert HeldTally("orders").report() is None
