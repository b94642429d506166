"""An item's content hash: what the ledger compares to know an item unchanged. It stays what
it was written as (a ledger keeps the hashes of past runs), whatever the order of the
item's fields and its modification times."""

from __future__ import annotations

from pipelines.engine.diff import content_hash

ITEM = {"order_id": "7", "amount": 12.5, "products": [{"product_id": 1, "quantity": 2}],
        "updated_at": "2024-05-01T10:00:00Z", "cart_updated_at": "2024-05-01T10:00:00Z",
        "note": None}


def test_the_hash_of_an_item_is_the_one_a_ledger_holds() -> None:
    assert content_hash(ITEM) == "1d21c49d0df36e567317f4031a856f3c"


def test_modification_times_and_field_order_leave_the_hash_as_it_is() -> None:
    moved = {**dict(reversed(ITEM.items())), "updated_at": "2025-01-01T00:00:00Z"}
    del moved["cart_updated_at"]
    assert content_hash(moved) == content_hash(ITEM)
    assert ITEM["cart_updated_at"] == "2024-05-01T10:00:00Z"  # the item itself is left whole
    assert content_hash({**ITEM, "note": ""}) != content_hash(ITEM)
