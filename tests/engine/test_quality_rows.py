"""What the quality suite reads of each item, taken as the item model lets it through
(``gate.row_of``): the suite then holds back, warns of and reports exactly what it does
reading the items themselves."""

from __future__ import annotations

from typing import Any

from connectors.marketing.samples import sample_item
from pipelines.engine.gate import check_quality, row_of
from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.quality import Pool
from pipelines.engine.quality.held import HeldTally
from pipelines.engine.state import Outcome
from pipelines.engine.stream_report import StreamReport


def orders() -> list[MappedItem]:
    """Twelve orders, four of them breaking a rule: a blocking one (email, currency) or a
    warning (a line to an unknown product, updated before created)."""
    items = []
    for i in range(12):
        order = sample_item("orders", order_id=f"o{i}")
        order["products"][0]["product_id"] = "p1"
        items.append(order)
    items[2]["customer"]["email"] = "ada@example.c"
    items[5]["currency"] = "EURO"
    items[7]["products"][0]["product_id"] = "unknown"
    items[9]["updated_at"] = "2000-01-01T00:00:00Z"
    return [MappedItem("orders", o["order_id"], o, o["order_id"]) for o in items]


def checked(items: list[MappedItem], rows: list[Any] | None
            ) -> tuple[list[str], list[Outcome], StreamReport]:
    held: list[Outcome] = []
    report = StreamReport("shop", "orders")
    kept = check_quality("orders", items, {m.key: "h" for m in items}, held, report,
                         HeldTally("orders"), lambda *_: {"products": {"p1"}}, Pool(2000),
                         rows)
    return [m.key for m in kept], held, report


def test_the_rows_taken_as_items_pass_their_model_find_what_reading_the_items_finds() -> None:
    by_items = checked(orders(), None)
    items = orders()
    by_rows = checked(items, [row_of(m) for m in items])

    kept, held, report = by_rows
    assert kept == by_items[0] and [m for m in kept if m in ("o2", "o5")] == []
    assert [(o.key, o.errors) for o in held] == [(o.key, o.errors) for o in by_items[1]]
    assert [q.results for q in report.quality["orders"]] == \
        [q.results for q in by_items[2].quality["orders"]]
    assert any(r["unexpected_count"] == 1 and "unknown_product_lines" in r["name"]
               for q in report.quality["orders"] for r in q.results)


def test_a_chunk_with_a_row_missing_is_judged_from_its_items() -> None:
    items = orders()
    rows = [row_of(m) for m in items]
    rows[3] = None  # could not be taken
    kept, held, _ = checked(items, rows)
    assert kept == checked(orders(), None)[0]
    assert {o.key for o in held} == {"o2", "o5"}
