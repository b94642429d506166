"""The products that order and cart lines may name: those the ledger holds as sent, in the
item's language or the source's, looked up once per product and run."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.marketing.samples import sample_item
from pipelines.engine.gate import KnownProducts, check_quality
from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.quality import HeldTally
from pipelines.engine.quality.frame import ChunkLines, line_products
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.stream_report import StreamReport
from tests.engine.state_support import S, outcome


def order(key: str, *product_ids: Any, lang: str | None = None) -> MappedItem:
    item: dict[str, Any] = {"id": key, "products": [{"product_id": p} for p in product_ids]}
    if lang is not None:
        item["lang"] = lang
    return MappedItem("orders", key, item, key)


def test_lines_name_products_sent_in_the_items_language_or_the_sources(
        store: StateStore) -> None:
    store.record(S, "products", [outcome("1|en", ItemStatus.ACCEPTED),
                                 outcome("2|fr", ItemStatus.VISIBLE),
                                 outcome("3|de", ItemStatus.ACCEPTED),
                                 outcome("4|en", ItemStatus.REJECTED)])
    known = KnownProducts(store, S, "en")

    found = known([order("a", 1, "2", lang="fr"), order("b", 3, 4), order("c")])

    # 2 is known in French, the order's language; 3 only in German, which no order has; 4
    # was refused
    assert found == {"products": {"1", "2"}}


def test_items_without_lines_need_no_products(store: StateStore) -> None:
    known = KnownProducts(store, S, "en")
    assert known([order("a"), MappedItem("orders", "b", {"products": None}, "b")]) is None


def test_each_product_is_looked_up_once_a_run(store: StateStore) -> None:
    known = KnownProducts(store, S, "en")
    assert known([order("a", 1)]) == {"products": set()}
    store.record(S, "products", [outcome("1|en", ItemStatus.ACCEPTED)])
    # sent since: the run goes on with what it found (the rule only warns)
    assert known([order("b", 1)]) == {"products": set()}
    assert KnownProducts(store, S, "en")([order("b", 1)]) == {"products": {"1"}}


def test_a_chunk_in_one_language_finds_what_its_items_find_one_by_one(store: StateStore) -> None:
    store.record(S, "products", [outcome("1|fr", ItemStatus.ACCEPTED),
                                 outcome("2|en", ItemStatus.ACCEPTED)])
    chunk = [order("a", 1, lang="fr"), order("b", 2, lang="fr"), order("c", lang="fr")]

    found = KnownProducts(store, S, "en")(chunk)

    assert found == {"products": {"1", "2"}}  # 1 in the chunk's language, 2 in the source's
    for item in chunk:
        assert (KnownProducts(store, S, "en")([item]) or {"products": set()})["products"] \
            <= found["products"]


def test_the_gate_looks_up_and_judges_each_items_language_as_the_item_holds_it() -> None:
    """The gate reads a chunk's languages once, for the products' look-up and for the
    suite: what one reads, the other judges."""
    orders = [MappedItem("orders", str(n), {**sample_item("orders"), "order_id": str(n),
                                            "lang": lang}, str(n))
              for n, lang in enumerate(["en", "fr", "english", "en"])]
    asked: list[list[str | None]] = []

    def known(items: list[MappedItem], lines: ChunkLines,
              langs: list[str | None] | None) -> dict[str, set[str]]:
        asked.append(list(langs or []))
        return {"products": set(lines.named)}

    held: list[Outcome] = []
    kept = check_quality("orders", orders, {m.key: m.key for m in orders}, held,
                         StreamReport("shop", "orders"), HeldTally("orders"), known)

    assert asked == [["en", "fr", "english", "en"]]
    assert [m.key for m in kept] == ["0", "1", "3"]
    assert [o.key for o in held] == ["2"]
    assert any("match_regex(lang)" in reason for reason in held[0].errors)


def test_each_item_counts_its_lines_naming_unknown_products() -> None:
    items = [order("a", 1, 2, 9).item, order("b", 1).item, order("c").item,
             {"products": None}, {"products": [{"product_id": 9}, "not a line"]}]
    known = {"1", "2"}

    read, taken = ChunkLines.read(items), ChunkLines(taken=[line_products(i) for i in items])

    assert read.unknown_counts(known) == taken.unknown_counts(known) == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert read.unknown_counts(known | {"9"}) == [0.0] * 5  # none unknown: the chunk at once
    assert read.named == taken.named == {"1", "2", "9"}
    assert read.by_lang(["fr", "en", "en", "de", "fr"]) == {"fr": {"1", "2", "9"}, "en": {"1"}}
    assert read.by_lang(["fr"] * 5) == {"fr": {"1", "2", "9"}}
    assert ChunkLines.read([{"products": []}, {}]).by_lang(["en", "fr"]) == {}


@pytest.mark.parametrize("odd", [[1, "1", None], [1, 1.0, True], ["1", [1]], [2**70, "x"]],
                         ids=["plain", "equal-not-alike", "unhashable", "huge"])
def test_ids_equal_as_values_count_as_the_text_they_make(odd: list[Any]) -> None:
    """1, 1.0 and True are one value to a set, three texts to the rule: a chunk whose lines
    hold any of them counts what its items count one by one."""
    items = [order(str(n), p, 2).item for n, p in enumerate(odd)] + [order("z", 2).item]
    known = {"1", "2"}

    read, taken = ChunkLines.read(items), ChunkLines(taken=[line_products(i) for i in items])

    assert read.unknown_counts(known) == taken.unknown_counts(known) == [
        float(p not in known) for p in map(str, odd)] + [0.0]
    assert read.named == taken.named == {*map(str, odd), "2"}


def test_lines_products_are_their_ids_as_text_one_per_line() -> None:
    assert line_products(order("a", 1, "2", 1).item) == ("1", "2", "1")
    assert line_products({"products": [{"product_id": None}, "not a line"]}) == ("None",)
    assert line_products({"products": None}) is None
