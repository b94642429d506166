"""Records deleted at the source are deleted at the destination in bulk deletes the API
takes: however many items a record had (a product's thousands of images), each request
stays within the batch the engine sends."""

from __future__ import annotations

import asyncio

from connectors.marketing.client import MarketingClient
from pipelines.engine.deletions import DELETE_BATCH, delete_records
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from sandbox.marketing.limits import MAX_DELETE_IDS
from tests.support import RunningSandbox, new_key

SOURCE = "shop"


def test_a_product_with_more_images_than_a_bulk_delete_takes_is_deleted_in_batches(
    sandbox: RunningSandbox, store: StateStore,
) -> None:
    images = MAX_DELETE_IDS + DELETE_BATCH // 2  # more than one request may name
    store.record(SOURCE, "products", [Outcome("7", "h", ItemStatus.VISIBLE, "7")])
    store.record(SOURCE, "images", [
        Outcome(f"img-{n}", "h", ItemStatus.VISIBLE, "7", payload={"product_id": "7"})
        for n in range(images)])

    async def delete() -> dict[str, int]:
        async with MarketingClient(sandbox.base_url, new_key()) as client:
            return dict(await delete_records(state=store, client=client, source=SOURCE,
                                             resources=["products", "images"],
                                             record_ids={"7"}))

    assert asyncio.run(delete()) == {"products": 1, "images": images}
    assert store.counts(SOURCE) == {"products": {"deleted": 1}, "images": {"deleted": images}}
