"""Quality and item-model failures tell one story: every row a sync holds back appears in
the run's quality summary (what the Dagster ``quality`` check shows) under the rule of the
stage that held it back — a record the connector could not read or a value past what the
API holds (``limit``), a mapping that raised (``mapping``), the item models (``model``),
the great-expectations suite (``suite``) — and the summary's count of held-back rows is the
ledger's count of the items the run quarantined. Warnings hold nothing back and are counted
too, each row once, in whichever chunk it came.

The shop is a drop folder of orders (``sandbox.shops.files``): the generated export, whose
rows include an email that is not one, a negative line price and a line that is not JSON,
plus a file of rows arranged to break one stage each, or a warning. It is synced in chunks
of four.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pipelines.engine.plan import SETTLE
from pipelines.engine.quality import rules_markdown, summarize
from pipelines.engine.quality.held import UNREADABLE
from pipelines.engine.state import ItemStatus
from sandbox.shops.files.config import STREAMS, TIMEZONE
from sandbox.shops.files.drop import BROKEN_JSON, Drop, order_export, touch_time, write_drop
from sandbox.shops.sql.data import BAD_EMAIL, generate
from tests.engine.support import EngineSetup, MakeSetup

SOURCE = "drop"
#: the order a mapping override cannot map (``fix`` below raises for it)
CRASHING = "SO-CRASH"
FIXES = f"""
    def fix(item, record):
        if item.get("reference") == {CRASHING!r}:
            raise KeyError("warehouse")
        return item
"""
SUITE_EMAIL = "expect_column_values_to_match_regex(customer.email)"
SUITE_CURRENCY = "expect_column_values_to_match_regex(currency)"
#: warnings the suite judges row by row, a few chunks at a time (``quality.Pool``)
WARN_DATES = "expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)"
WARN_AMOUNT = "expect_column_pair_values_a_to_be_greater_than_b(amount, amount_without_tax)"
#: the sync's chunks: the drop's 48 rows make twelve, the warnings' pool fills twice
CHUNK_ITEMS = 4


@dataclass
class Setup(EngineSetup):
    drop: Drop
    #: record id (an order's id, or the file:line of a line that is not JSON) -> rules that
    #: must hold it back (among others: a negative line price makes the totals negative too)
    expected: dict[str, set[str]]
    #: warning -> the ids of the orders that break it and reach the suite
    warned: dict[str, set[str]]


def arranged(template: dict[str, Any]) -> list[tuple[dict[str, Any], set[str]]]:
    """Rows breaking one stage each (and a clean one), with the rules that hold them back."""
    def order(order_id: int, **changes: Any) -> dict[str, Any]:
        row = {**template, "id": order_id, "number": f"SO-{order_id}", **changes}
        row["customer"] = {**template["customer"], **changes.get("customer", {})}
        return row

    line = template["items"][0]
    return [
        (order(5001), set()),
        (order(5002, customer={"email": BAD_EMAIL}), {"model: customer.email"}),
        (order(5003, number=CRASHING), {"mapping: KeyError"}),
        (order(5004, number="x" * 1_000_001), {"limits: text length"}),
        (order(5005, total="1e10000000"), {"limits: amount"}),
        (order(5006, currency="XYZ"), {SUITE_CURRENCY}),
        (order(5007, customer={"email": "ada@example..com"}), {SUITE_EMAIL}),
        (order(5008, items=[{**line, "unit_price": -2}]), {"model: products[].price"}),
        (order(5009, created_at=template["updated_at"] + timedelta(hours=1)), set()),
        (order(5010, total_excl=template["total"] + 1), set()),
    ]


def explains(rule: dict[str, Any], reasons: list[str]) -> bool:
    """One of an item's ledger reasons is the rule's: a suite rule's name, the field of a
    model's or a value's refusal, a mapping's error type (a bound's words: checked above)."""
    kind, subject = rule["kind"], rule["name"].partition(": ")[2]
    if kind == "suite":
        return any(r.startswith(f"quality: {rule['name']} — ") for r in reasons)
    if kind == "mapping":
        return any(f"cannot be mapped: {subject}" in r for r in reasons)
    fields = {re.sub(r"\[\d+\]", "[]", r.partition(": ")[0]) for r in reasons}
    return subject in fields or kind == "limit"


@pytest.fixture
def setup(engine_setup: MakeSetup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    (tmp_path / "story_fixes.py").write_text(textwrap.dedent(FIXES))
    monkeypatch.syspath_prepend(str(tmp_path))
    root = tmp_path / "drop"
    shop = generate(11, orders=40, customers=12, products=6)
    for order in shop.tables["orders"][2::5]:  # warnings in every part of the stream
        order["created_at"] = order["updated_at"] + timedelta(minutes=5)
    drop = write_drop(root, shop, streams=["orders"])
    export = order_export(shop)
    expected: dict[str, set[str]] = {}
    for row in export:
        if row["customer"]["email"] == BAD_EMAIL:
            expected.setdefault(str(row["id"]), set()).add("model: customer.email")
        if any(line["unit_price"] < 0 for line in row["items"]):
            expected.setdefault(str(row["id"]), set()).add("model: products[].price")
    expected |= {origin: {UNREADABLE} for origin in drop.ids["orders"] if ":" in origin}
    rows = arranged(export[0])
    drop.jsonl("orders", "orders-arranged.jsonl", [row for row, _ in rows],
               broken=[BROKEN_JSON.replace("999999", "999998")], mtime=touch_time())
    expected |= {str(row["id"]): rules for row, rules in rows if rules}
    expected |= {origin: {UNREADABLE} for origin in drop.ids["orders"]
                 if origin.startswith("orders/orders-arranged")}
    judged = [row for row in [*export, *(row for row, _ in rows)]
              if expected.get(str(row["id"]), set()) <= {SUITE_EMAIL, SUITE_CURRENCY}]
    warned = {WARN_DATES: {str(r["id"]) for r in judged if r["created_at"] > r["updated_at"]},
              WARN_AMOUNT: {str(r["id"]) for r in judged if r["total_excl"] > r["total"]}}
    return engine_setup(Setup, {
        "name": SOURCE, "platform": "files",
        "connection": {"path": str(root),
                       "options": {"timezone": TIMEZONE, "page_size": CHUNK_ITEMS},
                       "streams": {"orders": STREAMS["orders"]}},
        "mapping": {"orders": {"callable": "story_fixes:fix"}},
        "tuning": {"chunk_items": CHUNK_ITEMS},
    }, drop=drop, expected=expected, warned=warned)


def test_every_row_held_back_is_in_the_quality_summary_under_its_rule(setup: Setup) -> None:
    report = setup.run_by_stream()["orders"]
    summary = summarize(report.quality["orders"])
    quarantined = setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})

    assert {e.source_record_id for e in quarantined} == set(setup.expected), "as arranged"
    assert summary["blocked"] == len(quarantined) == report.counts["orders"]["quarantined"]
    assert summary["rows"] == report.counts["orders"]["extracted"]  # every row, judged once
    assert summary["checked"] + sum(summary["held"][k] for k in ("limit", "mapping", "model")) \
        == summary["rows"]
    assert sum(summary["held"].values()) == summary["blocked"]
    for entry in quarantined:
        listing = [r for r in summary["rules"] if entry.key in r["sample"]]
        assert setup.expected[str(entry.source_record_id)] <= {r["name"] for r in listing}, (
            entry.key, entry.errors)
        assert all(explains(rule, entry.errors) for rule in listing), (entry.key, entry.errors)
    by_name = {r["name"]: r for r in summary["rules"]}
    assert {name: by_name[name]["kind"] for name in ("limits: text length", "limits: amount",
                                                     UNREADABLE, "mapping: KeyError",
                                                     "model: customer.email", SUITE_EMAIL)} == {
        "limits: text length": "limit", "limits: amount": "limit", UNREADABLE: "limit",
        "mapping: KeyError": "mapping", "model: customer.email": "model", SUITE_EMAIL: "suite"}
    (email,) = [e for e in quarantined if e.key == "5002"]
    assert email.errors == [f"customer.email: '{BAD_EMAIL}' is not a well-formed email address"]
    assert by_name["model: customer.email"]["unexpected_count"] == sum(
        "model: customer.email" in rules for rules in setup.expected.values())
    (crashed,) = [e for e in quarantined if e.key == "5003"]
    assert "cannot be mapped: KeyError: 'warehouse'" in crashed.errors[0]
    assert "| mapping | `mapping: KeyError` | yes | 1 | `5003` |" in rules_markdown(summary)


def test_warnings_judged_a_few_chunks_at_a_time_count_every_row_once(setup: Setup) -> None:
    report = setup.run_by_stream()["orders"]
    summary = summarize(report.quality["orders"])
    by_name = {r["name"]: r for r in summary["rules"]}

    assert report.records > 5 * CHUNK_ITEMS * 2, "the pool fills, and some is left at the end"
    assert {"5009"} <= setup.warned[WARN_DATES] and {"5010"} <= setup.warned[WARN_AMOUNT]
    for rule, keys in setup.warned.items():
        assert by_name[rule]["unexpected_count"] == len(keys), rule
        assert set(by_name[rule]["sample"]) == keys, rule
        assert not by_name[rule]["blocking"] and not by_name[rule]["success"]
    accepted = setup.state.entries(SOURCE, "orders", {ItemStatus.ACCEPTED, ItemStatus.VISIBLE})
    assert {"5009", "5010"} <= {e.key for e in accepted}, "a warning holds nothing back"


def test_a_rerun_judges_nothing_again_and_holds_nothing_new(setup: Setup) -> None:
    """Rows unchanged since they were held back are not judged again: the run's summary
    is about what the run did; the ledger still holds them (the state checks show that)."""
    setup.run()
    held = len(setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED}))
    setup.clock.advance(SETTLE)

    report = setup.run_by_stream()["orders"]

    summary = summarize(report.quality.get("orders", ()))
    assert (summary["rows"], summary["blocked"]) == (0, 0)
    assert len(setup.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED})) == held

