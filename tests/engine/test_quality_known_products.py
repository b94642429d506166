"""The products that order and cart lines may name: those the ledger holds as sent, in the
item's language or the source's, looked up once per product and run."""

from __future__ import annotations

from typing import Any

from pipelines.engine.gate import KnownProducts
from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.quality.frame import line_products
from pipelines.engine.state import ItemStatus, StateStore
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



def test_lines_products_are_their_ids_as_text_one_per_line() -> None:
    assert line_products(order("a", 1, "2", 1).item) == ("1", "2", "1")
    assert line_products({"products": [{"product_id": None}, "not a line"]}) == ("None",)
    assert line_products({"products": None}) is None
