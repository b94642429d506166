"""The bulk writer against a real sandbox over localhost HTTP: how items are cut into
batches, and the exact outcome each item gets back.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from connectors.marketing.client import MarketingClient
from connectors.marketing.samples import sample_item
from connectors.marketing.writer import BulkWriter
from sandbox.marketing.settings import DEFAULT_KEY
from tests.connectors.writer_support import by_key, customer, push, sandbox_stats

# batching -------------------------------------------------------------------------------


def test_items_go_in_batches_of_the_resource_max(sandbox, fresh_key):
    key = fresh_key()
    outcomes, writer = asyncio.run(push(sandbox.base_url, key, (customer(i) for i in range(120))))

    assert Counter(o.status for o in outcomes) == {"accepted": 120}
    assert sorted(Counter(o.batch for o in outcomes).values(), reverse=True) == [50, 50, 20]
    assert writer.requests == 3
    assert sorted(by_key(outcomes)) == sorted(f"c{i}" for i in range(120))
    assert all(o.item is None and o.errors == () for o in outcomes)
    stats = sandbox_stats(sandbox, key)
    assert stats["writes"]["customers"]["accepted"] == 120
    assert stats["stored"]["customers"] == 120


def test_language_scoped_items_are_keyed_by_id_and_lang_in_batches_of_100(sandbox, fresh_key):
    key = fresh_key()
    categories = [sample_item("categories", category_id=i, lang=lang)
                  for i in range(125) for lang in ("en", "fr")]

    outcomes, _ = asyncio.run(push(sandbox.base_url, key, categories, "categories"))

    assert sorted(Counter(o.batch for o in outcomes).values(), reverse=True) == [100, 100, 50]
    assert set(by_key(outcomes)) == {(i, lang) for i in range(125) for lang in ("en", "fr")}
    assert sandbox_stats(sandbox, key)["stored"]["categories"] == 250


def test_an_async_iterable_works_like_a_plain_one(sandbox, fresh_key):
    async def items() -> AsyncIterator[dict[str, Any]]:
        for i in range(75):
            await asyncio.sleep(0)
            yield customer(i)

    outcomes, _ = asyncio.run(push(sandbox.base_url, fresh_key(), items()))
    assert Counter(o.status for o in outcomes) == {"accepted": 75}


def test_a_batch_size_above_the_resource_max_is_refused_up_front():
    client = MarketingClient("http://127.0.0.1:9/v1", DEFAULT_KEY)
    with pytest.raises(ValueError, match="between 1 and 50"):
        BulkWriter(client, "customers", batch_size=51)
    with pytest.raises(ValueError, match="unknown sync resource"):
        BulkWriter(client, "customer")


# per-item outcomes ----------------------------------------------------------------------


def test_mixed_items_get_exact_outcomes_keyed_by_customer_id(sandbox, fresh_key):
    key = fresh_key()
    items = [customer(i) for i in range(60)]
    items[3] = customer(3, email="not-an-email")
    items[51] = customer(51, is_opt_in="yes")
    items[52] = customer(52, id_data_source=999)
    del items[59]["last_name"]
    untouched = json.dumps(items, sort_keys=True)

    outcomes, _ = asyncio.run(push(sandbox.base_url, key, items))

    found = by_key(outcomes)
    rejected = {k for k, o in found.items() if o.status == "rejected"}
    assert rejected == {"c3", "c51", "c52", "c59"}
    assert len(found) == 60
    assert any("email" in e for e in found["c3"].errors)
    assert any(e.startswith("is_opt_in") for e in found["c51"].errors)
    assert any("data source 999" in e for e in found["c52"].errors)
    assert found["c59"].errors == ("last_name: is required",)
    assert found["c51"].item is items[51]
    assert all(found[f"c{i}"].item is None for i in range(60) if f"c{i}" not in rejected)
    assert json.dumps(items, sort_keys=True) == untouched, "the writer changed an item"
    assert sandbox_stats(sandbox, key)["stored"]["customers"] == 56


def test_update_mode_rejects_unknown_ids(sandbox, fresh_key):
    key = fresh_key()
    asyncio.run(push(sandbox.base_url, key, [customer(i) for i in range(10)]))

    changed = [customer(i, first_name="Grace") for i in range(15)]
    outcomes, _ = asyncio.run(push(sandbox.base_url, key, changed, mode="update"))

    found = by_key(outcomes)
    rejected = {k for k, o in found.items() if o.status == "rejected"}
    assert rejected == {f"c{i}" for i in range(10, 15)}
    assert "no item with customer_id 'c12'" in found["c12"].errors[0]
