"""The bulk writer against a real sandbox over localhost HTTP: how items are cut into
batches, and the exact outcome each item gets back.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from connectors.marketing.client import MarketingClient
from connectors.marketing.samples import sample_item
from connectors.marketing.writer import BatchOutcome, BulkWriter, ItemOutcome, WriteSummary
from sandbox.marketing.settings import DEFAULT_KEY
from tests.connectors.writer_support import (
    FAST,
    by_key,
    customer,
    push,
    sandbox_stats,
    stored_among,
)

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


# a batch at a time ------------------------------------------------------------------------


def test_a_batch_at_a_time_names_only_the_items_not_accepted(sandbox, fresh_key):
    items = [customer(i) for i in range(60)]
    items[3] = customer(3, email="not-an-email")
    items[51] = customer(51, is_opt_in="yes")

    async def run() -> list[BatchOutcome]:
        async with MarketingClient(sandbox.base_url, fresh_key(), retry=FAST) as client:
            writer = BulkWriter(client, "customers", concurrency=1)
            return [batch async for batch in writer.write_batches(items)]

    first, second = sorted(asyncio.run(run()), key=lambda batch: batch.batch)

    assert (first.batch, second.batch) == (0, 1)
    assert first.items == items[:50] and second.items == items[50:]
    assert {i: (o.key, o.status) for i, o in first.refused.items()} == {3: ("c3", "rejected")}
    assert {i: (o.key, o.status) for i, o in second.refused.items()} == {1: ("c51", "rejected")}
    assert first.refused[3].item is items[3]
    assert (first.accepted, second.accepted) == (49, 9)
    assert list(second.counts().items()) == [("accepted", 9), ("rejected", 1)]
    assert second.keys() == [f"c{i}" for i in range(50, 60)]


def test_a_batchs_outcomes_are_those_write_yields_item_by_item(sandbox, fresh_key):
    items = [customer(i) for i in range(60)]
    items[7] = customer(7, email="not-an-email")
    batches: list[BatchOutcome] = []

    async def run() -> tuple[WriteSummary, list[ItemOutcome]]:
        async with MarketingClient(sandbox.base_url, fresh_key(), retry=FAST) as client:
            summary = await BulkWriter(client, "customers").write_all(
                items, on_batch=batches.append)
            again = [o async for o in BulkWriter(client, "customers").write(items)]
        return summary, again

    summary, again = asyncio.run(run())

    outcomes = [o for batch in batches for o in batch.outcomes()]
    assert sorted(outcomes, key=repr) == sorted(again, key=repr)
    assert (summary.accepted, summary.rejected, summary.failed) == (59, 1, 0)
    assert next(o for o in outcomes if o.key == "c8") == ItemOutcome("c8", "accepted", batch=0)


def test_items_given_as_their_json_are_sent_as_they_are_and_named_by_their_place(
        sandbox, fresh_key):
    items = [customer(i) for i in range(120)]
    items[3] = customer(3, email="not-an-email")
    items[104] = customer(104, is_opt_in="yes")
    encoded = [orjson.Fragment(orjson.dumps(item)) for item in items]
    batches: list[BatchOutcome] = []
    key = fresh_key()

    async def run() -> WriteSummary:
        async with MarketingClient(sandbox.base_url, key, retry=FAST) as client:
            return await BulkWriter(client, "customers", concurrency=1).write_all(
                encoded, on_batch=batches.append)

    summary = asyncio.run(run())

    assert (summary.accepted, summary.rejected) == (118, 2)
    assert sorted((b.start, len(b.items)) for b in batches) == [(0, 50), (50, 50), (100, 20)]
    refused = {b.start + i: o for b in batches for i, o in b.refused.items()}
    assert sorted(refused) == [3, 104]
    assert refused[3].item is encoded[3] and refused[3].key is None
    assert any("email" in e for e in refused[3].errors)
    stored = asyncio.run(stored_among(sandbox.base_url, key, [f"c{i}" for i in range(120)]))
    assert stored == {f"c{i}" for i in range(120)} - {"c3", "c104"}
