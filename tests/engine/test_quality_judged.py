"""Items judged where they were read (a read process's ``JudgedPages``): the run quarantines
and reports them as it would had it checked them itself — the same items held back with the
same reasons, the same rules failing and warning — and runs only the rules that need the
ledger (lines naming known products) itself. Pages wait until about a chunk's items can be
judged together; an item the suite cannot run on is held back; until the suites are
planned, and when judging is off, pages travel as they come, unjudged.
"""

from __future__ import annotations

import pickle
from dataclasses import astuple
from datetime import UTC, datetime
from typing import Any

import pytest

from connectors.sources.base import Position
from pipelines.engine import gate
from pipelines.engine.gate import PrecheckedItem, check_quality
from pipelines.engine.mapped_pages import JudgedPages, Mapped, unpack
from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.quality import HeldTally, QualityReport
from pipelines.engine.quality import check as quality
from pipelines.engine.state import Outcome
from pipelines.engine.stream_report import StreamReport
from tests.engine.quality_support import KNOWN, valid

WHEN = datetime(2024, 5, 1, tzinfo=UTC)


def orders() -> list[MappedItem]:
    """Orders breaking a blocking rule each, others a warning each, one clean, one read
    twice."""
    items = valid("orders", 7)
    items[1]["currency"] = "EUE"
    items[2]["customer"] = {**items[2]["customer"], "email": "ada@example..com"}
    items[3]["created_at"] = "2099-01-01T00:00:00Z"  # created after its update: a warning
    items[4]["amount"] = 1.0  # less with tax than without: a warning
    items[5]["products"] = [*items[5]["products"], {**items[5]["products"][0],
                                                   "product_id": 999}]  # not a known one
    mapped = [MappedItem("orders", str(item["order_id"]), item, str(i), WHEN)
              for i, item in enumerate(items)]
    return [*mapped, mapped[1]]


def pages(items: list[MappedItem]) -> list[list[Mapped]]:
    """The items as two pages of one record each."""
    records = [Mapped(Position(WHEN, m.source_record_id), [m]) for m in items]
    return [records[:3], records[3:]]


def travelled(judging: JudgedPages, read: list[list[Mapped]]) -> list[MappedItem]:
    """The items the run receives of ``read``, as ``judging`` sends its pages."""
    sent = [page for p in read for page in judging.add(p)] + judging.flush()
    return [m for page in sent for r in unpack(pickle.loads(pickle.dumps(page)))
            for m in r.items or []]


def checked(items: list[MappedItem]) -> tuple[list[str], list[tuple[str, list[str]]],
                                              list[tuple[Any, ...]]]:
    """What the run's check of a chunk of ``items`` keeps, holds back (with reasons) and
    reports (time aside)."""
    report, held = StreamReport("shop", "orders"), list[Outcome]()
    latest = {m.key: m for m in items}
    kept = check_quality("orders", list(latest.values()), dict.fromkeys(latest, "h"), held,
                         report, HeldTally("orders"), lambda _: KNOWN)
    return ([m.key for m in kept], [(o.key, list(o.errors)) for o in held],
            [astuple(QualityReport(**{**r.__dict__, "seconds": 0.0}))
             for r in report.quality["orders"]])


@pytest.fixture
def planned() -> None:
    quality.plan_suite("orders")


def test_items_judged_where_they_were_read_are_held_and_reported_as_the_run_would(
        planned: None) -> None:
    read = orders()

    received = travelled(JudgedPages(4, {"orders"}), pages(read))

    assert all(isinstance(m, PrecheckedItem) and m.judged is not None for m in received)
    assert checked(received) == checked(read)
    kept, held, (report,) = checked(received)
    assert [key for key, _ in held] == [read[1].key, read[2].key]
    assert report[3] == {  # warnings: the batch's, and the ledger's rule the run ran
        "expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)": 1,
        "expect_column_pair_values_a_to_be_greater_than_b(amount, amount_without_tax)": 1,
        "expect_column_values_to_be_between(unknown_product_lines)": 1}


def test_pages_wait_for_a_chunk_of_items_then_travel_in_their_order(planned: None) -> None:
    judging = JudgedPages(4, {"orders"})
    first, second = pages(orders())

    assert judging.add(first) == []  # 3 items: not a chunk yet
    sent = judging.add(second)

    assert [[m.position for m in unpack(page)] for page in sent] == [
        [m.position for m in first], [m.position for m in second]]
    assert judging.flush() == []


def test_an_item_the_suite_cannot_run_on_is_held_back_and_the_rest_judged(
        planned: None, monkeypatch: pytest.MonkeyPatch) -> None:
    read = orders()
    read[0].item["reference"] = "crashes the checks"
    judge = quality.judge

    def crashing(resource: str, items: list[dict[str, Any]]) -> Any:
        if any(item.get("reference") == "crashes the checks" for item in items):
            raise ValueError("no frame for this one")
        return judge(resource, items)

    monkeypatch.setattr(gate, "judge", crashing)

    received = travelled(JudgedPages(100, {"orders"}), pages(read))

    crashed = received[0]
    assert isinstance(crashed, PrecheckedItem) and crashed.judged is None
    assert crashed.hold is not None and crashed.hold.kind == "suite"
    assert crashed.hold.reasons == [
        "quality: the checks cannot run on this item: ValueError: no frame for this one"]
    assert all(isinstance(m, PrecheckedItem) and m.judged is not None for m in received[1:])


def test_until_the_suites_are_planned_pages_travel_unjudged_for_the_run_to_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "_compiled", {})  # nothing planned in this process
    read = orders()

    received = travelled(JudgedPages(4, {"orders"}), pages(read))

    assert [m.key for m in received] == [m.key for m in read]
    assert all(isinstance(m, PrecheckedItem) and m.judged is None for m in received)


def test_without_resources_to_judge_each_page_travels_as_it_comes() -> None:
    judging = JudgedPages(4, set())
    first, _ = pages(orders())

    (sent,) = judging.add(first)

    assert [m.position for m in unpack(sent)] == [m.position for m in first]
