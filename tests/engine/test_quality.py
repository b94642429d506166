"""The quality suites: each blocking rule holds back exactly the items that break it.

For every resource and every blocking rule of its suite, a batch of valid items plus one
item broken for that rule (two for uniqueness rules) must report the broken item(s) with the
rule's name, and nothing else. A table below says how to break each rule; a rule added
without a way to break it here fails ``test_every_blocking_rule_has_a_breaking_case``.
"""

from __future__ import annotations

import itertools
import json
import re
import string
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources
from pipelines.engine.quality import (
    KINDS,
    HeldTally,
    QualityReport,
    check,
    check_items,
    rules_markdown,
    summarize,
)
from pipelines.engine.quality import held as held_rules
from pipelines.engine.quality.plan import reference
from pipelines.engine.quality.suites import (
    CURRENCIES,
    CURRENCY_REGEX,
    LANG_REGEX,
    LANGUAGES,
    Rule,
    Suite,
    rules_for,
)

KNOWN = {"products": {"101", "102"}}
Item = dict[str, Any]


def suite_of(resource: str) -> Suite:
    suite = rules_for(resource)
    assert suite is not None
    return suite


def valid(resource: str, n: int) -> list[Item]:
    """``n`` valid items of ``resource`` with distinct ids."""
    spec = SYNC_RESOURCES[resource]
    base = sample_item(resource)
    ident = base[spec.id_field]
    items = [sample_item(resource, **{spec.id_field: ident + i if isinstance(ident, int)
                                      else f"{ident}-{i}"}) for i in range(n)]
    for i, item in enumerate(items):
        if item.get("email"):
            item["email"] = f"user{i}@example.com"
    return items


def _set(field: str, value: Any) -> Callable[[Item], None]:
    def apply(item: Item) -> None:
        item[field] = value
    return apply


def _negative_amount(item: Item) -> None:
    if "products" in item:
        item["products"] = [{**item["products"][0], "quantity": -1}]
    else:
        field = next(f for f in ("price", "minimum_amount", "amount") if f in item)
        item[field] = -1


def _customer_email(item: Item) -> None:
    item["customer"] = {**item["customer"], "email": "ada@example..com"}


#: expectation type (and, for some, column) -> how to break an item for it
BREAK: dict[str, Callable[[Item], None]] = {
    "expect_column_values_to_match_regex(lang)": _set("lang", "xx"),
    "expect_column_values_to_match_regex(currency)": _set("currency", "EUE"),
    "expect_column_values_to_match_regex(email)": _set("email", "ada@example"),
    "expect_column_values_to_match_regex(customer.email)": _customer_email,
    "expect_column_values_to_be_between(amounts)": _negative_amount,
    "expect_column_values_to_not_be_null(created_at)": _set("created_at", "yesterday"),
    "expect_column_values_to_not_be_null(updated_at)": _set("updated_at", None),
    "expect_column_values_to_not_be_null(cart_updated_at)": _set("cart_updated_at", "soon"),
    "expect_column_values_to_not_be_null(started_at)": _set("started_at", "2026-02-30T00:00:00Z"),
    "expect_column_values_to_be_between(value)": _set("value", 150),
}


def breaker(resource: str, rule: Rule) -> Callable[[Item], None] | None:
    """How to break ``rule`` for one item; None for uniqueness (needs two items)."""
    spec = SYNC_RESOURCES[resource]
    if rule.name in (f"expect_column_values_to_not_be_null({spec.id_field})",
                     f"expect_column_values_to_not_be_null({spec.parent_field})"):
        return _set(rule.name.split("(")[1].rstrip(")"), None)
    if "unique" in rule.name:
        return None
    return BREAK[rule.name]


def blocking_cases() -> list[Any]:
    """(resource, rule, after_models): every blocking rule alone, and again as the engine
    runs it (after the item models) unless the models already guarantee it."""
    return [pytest.param(resource, rule, after, id=f"{resource}-{rule.name}"
                         + ("-after_models" if after else ""))
            for resource in sample_resources()
            for rule in suite_of(resource).rules if rule.blocking
            for after in (False, True) if not (after and rule.model_checked)]


def keyed(items: list[Item]) -> list[tuple[str, Item]]:
    return [(f"k{i}", item) for i, item in enumerate(items)]


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


def test_suites_prepared_in_the_background_are_the_ones_the_checks_use() -> None:
    resources = sorted(SYNC_RESOURCES)
    preparing = check.prepare(resources)  # None: this process planned them already
    report = check_items("orders", keyed(valid("orders", 2)), known=KNOWN)  # meanwhile
    if preparing is not None:
        preparing.join(timeout=120)
        assert not preparing.is_alive()
    assert report.failures == {} and report.rows == 2
    plans = {r: check._compile(r, True) for r in resources}
    assert check.prepare(resources) is None  # again: nothing planned twice
    assert all(check._compile(r, True) is plans[r] for r in resources)


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


@pytest.mark.parametrize("created_at", ["2026-01-15T10:30:00,5+02:00", "2026-W03-4",
                                        "20260115T080000Z", "2026-01-15 09:00:00+00:00"])
def test_timestamps_the_models_accept_are_parsed(created_at: str) -> None:
    item = sample_item("carriers", created_at=created_at)
    assert check_items("carriers", [("k", item)]).failures == {}


def test_warnings_count_but_do_not_block() -> None:
    items = valid("customers", 3)
    items[2]["email"] = items[0]["email"]  # two customers, one contact
    report = check_items("customers", keyed(items))
    assert report.failures == {}
    assert report.warnings == {"expect_column_values_to_be_unique(email)": 2}

    products = valid("products", 3)
    products[1]["quantity_remaining"] = -2
    products[2]["created_at"] = "2026-01-15T10:30:04Z"  # 4 s after its update, as shops do
    report = check_items("products", keyed(products))
    assert report.failures == {}
    assert report.warnings == {
        "expect_column_values_to_be_between(quantity_remaining)": 1,
        "expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)": 1}


def test_lines_to_unknown_products_warn_and_need_the_known_ids() -> None:
    orders = valid("orders", 2)
    orders[1]["products"] = [*orders[1]["products"], {**orders[1]["products"][0],
                                                      "product_id": 999}]
    rule = "expect_column_values_to_be_between(unknown_product_lines)"
    report = check_items("orders", keyed(orders), known=KNOWN)
    assert report.failures == {}
    assert report.warnings == {rule: 1}
    assert [r["sample"] for r in report.results if r["name"] == rule] == [["k1"]]

    report = check_items("orders", keyed(orders))
    (skipped,) = [r for r in report.results if r["name"] == rule]
    assert skipped["skipped"] and skipped["success"]
    assert report.warnings == {}


@pytest.mark.parametrize("lang", ["en", "FR", "fr-FR", "pt_BR", "es-419", "zh-Hant"])
def test_language_codes_accepted(lang: str) -> None:
    assert check_items("groups", [("g", sample_item("groups", lang=lang))]).failures == {}


@pytest.mark.parametrize("lang", ["xx", "eng", "english", "e", "en-", "fr-FRA1"])
def test_language_codes_refused(lang: str) -> None:
    assert check_items("groups", [("g", sample_item("groups", lang=lang))]).failures == {
        "g": ["expect_column_values_to_match_regex(lang)"]}


def test_the_code_regexes_accept_exactly_the_code_lists() -> None:
    lang, currency = re.compile(LANG_REGEX), re.compile(CURRENCY_REGEX)
    pairs = ["".join(p) for p in itertools.product(string.ascii_lowercase, repeat=2)]
    assert {p for p in pairs if lang.search(p)} == LANGUAGES
    assert {p for p in pairs if lang.search(p.upper())} == LANGUAGES
    triples = ["".join(p) for p in itertools.product(string.ascii_uppercase, repeat=3)]
    assert {t for t in triples if currency.search(t)} == CURRENCIES
    assert not currency.search("eur") and not currency.search("EURO")


@pytest.mark.parametrize("email", ["a.b+tag@example.co.uk", "müller@münchen.de",
                                   "o'neil@shop.example.com", "x@xn--p1ai.xn--p1ai"])
def test_emails_accepted(email: str) -> None:
    assert check_items("customers", [("c", sample_item("customers", email=email))]).failures == {}


@pytest.mark.parametrize("email", ["ada@example", "ada@example..com", ".ada@example.com",
                                   "ada.@example.com", "ada@example.c", "ada @example.com",
                                   "ada@-example.com", ""])
def test_emails_refused(email: str) -> None:
    assert check_items("customers", [("c", sample_item("customers", email=email))]).failures == {
        "c": ["expect_column_values_to_match_regex(email)"]}


def test_timestamps_with_offsets_compare_in_utc() -> None:
    # 10:30+02:00 is 08:30Z: before the 09:00Z update, though it reads later as text
    item = sample_item("carriers", created_at="2026-01-15T10:30:00+02:00",
                       updated_at="2026-01-15T09:00:00Z")
    report = check_items("carriers", [("k", item)])
    assert (report.failures, report.warnings) == ({}, {})


def test_a_cart_without_email_is_fine() -> None:
    cart = sample_item("carts", email=None, customer_id=None)
    assert check_items("carts", [("c", cart)], known=KNOWN).failures == {}


def test_an_empty_batch_works() -> None:
    report = check_items("orders", [])
    assert report == QualityReport("orders", 0, {}, {}, [], report.seconds)
    assert summarize([report])["rows"] == 0


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


def test_clean_and_dirty_batches_alternate_correctly() -> None:
    """The pass strategy adapts to the previous batch; the findings must not."""
    good = keyed(valid("statuses", 3))
    bad = [("b", sample_item("statuses", lang="zz"))]
    for batch, expected in [(good, {}), (bad, {"b": ["expect_column_values_to_match_regex(lang)"]}),
                            (good, {}), (good, {}), (bad, {"b": [
                                "expect_column_values_to_match_regex(lang)"]})]:
        assert check_items("statuses", batch).failures == expected


def faulty(resource: str) -> list[tuple[str, Item]]:
    """Valid items, one broken for each blocking rule of the suite, one created after its
    update (a warning), and two sharing an id."""
    rules = [rule for rule in suite_of(resource).rules
             if rule.blocking and "unique" not in rule.name]
    items = valid(resource, len(rules) + 3)
    for item, rule in zip(items, rules, strict=False):
        breaker(resource, rule)(item)  # type: ignore[misc]
    if "created_at" in items[-3]:
        items[-3]["created_at"] = "2099-01-01T00:00:00Z"
    ident = SYNC_RESOURCES[resource].id_field
    items[-1][ident] = items[-2][ident]
    return keyed(items)


@pytest.mark.parametrize("resource", sample_resources())
@pytest.mark.parametrize("after_models", [False, True])
def test_the_planned_validation_finds_what_batch_validate_finds(resource: str,
                                                                after_models: bool) -> None:
    """The engine runs each suite through a plan built once (``plan.py``), not through
    ``batch.validate``: on the same frame, every rule must come out the same, pass or fail,
    with the same items, in both result formats."""
    compiled = check._compile(resource, after_models)
    assert compiled is not None
    frame = check.item_frame(compiled.suite, faulty(resource), KNOWN, compiled.columns)
    expectations = {name: rule.expectation for name, rule in compiled.rules.items()}
    for fmt in ("boolean", "complete"):
        planned = compiled.plan.run(frame, dict.fromkeys(compiled.rules, fmt))
        assert planned == reference(frame, expectations, fmt)
    assert any(finding.keys for finding in planned.values()) or not compiled.rules


def test_a_rule_gx_cannot_evaluate_holds_nothing_back_and_shows_its_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rule = "expect_column_values_to_be_between(quantity_remaining)"
    frame_of = check.item_frame

    def broken_frame(*args: Any, **kwargs: Any) -> Any:
        frame = frame_of(*args, **kwargs)
        frame["quantity_remaining"] = pd.Series(["many", 1.0], dtype=object)  # no order
        return frame

    monkeypatch.setattr(check, "item_frame", broken_frame)
    report = check_items("products", keyed(valid("products", 2)), after_models=True)

    assert report.failures == {} and report.warnings == {}
    (result,) = [r for r in report.results if r["name"] == rule]
    assert not result["success"] and result["unexpected_count"] == 0
    assert "same type" in result["error"]
    compiled = check._compile("products", True)
    assert compiled is not None
    frame = broken_frame(compiled.suite, keyed(valid("products", 2)), None, compiled.columns)
    assert reference(frame, {rule: compiled.rules[rule].expectation}, "complete")[rule].error \
        == result["error"]


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


#: run in a fresh interpreter: what is imported when ``prepare`` returns, before its thread ends
_FRESH_PREPARE = """
import sys
from pipelines.engine.quality.check import SHARED_WITH_GX, prepare
thread = prepare(["orders"])
whole = [name for name in SHARED_WITH_GX
         if name in sys.modules and not getattr(sys.modules[name].__spec__, "_initializing", False)]
import sqlalchemy.orm.exc
print(thread is not None, whole == list(SHARED_WITH_GX), hasattr(sqlalchemy.orm.exc, "UnmappedClassError"))
thread.join()
"""


def test_the_packages_the_gx_import_shares_are_whole_before_its_thread_starts():
    # other threads use them while GX imports in its own: half-imported, they fail there
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", _FRESH_PREPARE], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])

    assert done.stdout.split() == ["True", "True", "True"], done.stderr
