"""What the scale bench checks after its runs: every shop's orders at the destination, in its
own data source, once — read from the shops and the Marketing API, not from the runs' reports.

A shop's order is *lost* when the destination does not list it in the shop's data source and
the ledger does not hold it back (quarantined with a reason, or still refused); it is
*duplicated* when the destination lists it more than once, or lists an order the shop does
not have (another shop's, written into the wrong data source).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass

import httpx

from connectors.marketing.client import MarketingClient
from connectors.marketing.query import Operator, Query
from pipelines.engine.state import StateStore
from pipelines.engine.state.models import ItemStatus

#: ledger states that account for an order missing from the destination
HELD_BACK = (ItemStatus.QUARANTINED, ItemStatus.REJECTED, ItemStatus.PARKED)


@dataclass(frozen=True)
class ShopCheck:
    source: str
    at_shop: int
    at_destination: int
    held_back: int
    lost: int
    duplicated: int
    #: a few of the lost and duplicated ids, to start looking from
    examples: tuple[str, ...] = ()


def shop_order_ids(root: str, key: str, secret: str) -> set[int]:
    """Every order id of a fake WooCommerce shop that a sync sends: the default listing and
    the trash (a trashed order reaches the destination as a change), without checkout
    drafts (carts, not orders), page by page."""
    ids: set[int] = set()
    with httpx.Client(base_url=f"{root}/wp-json/wc/v3", auth=(key, secret), timeout=60) as shop:
        for status in ({}, {"status": "trash"}):
            page = 1
            while True:
                answer = shop.get("/orders", params={"per_page": 100, "page": page, **status})
                answer.raise_for_status()
                ids.update(int(row["id"]) for row in answer.json()
                           if row.get("status") != "checkout-draft")
                if page >= int(answer.headers.get("X-WP-TotalPages", page)):
                    break
                page += 1
    return ids


async def destination_order_ids(base_url: str, api_key: str,
                                labels: list[str]) -> dict[str, list[str]]:
    """The order ids the destination lists per data source label (repeats kept)."""
    found: dict[str, list[str]] = {}
    async with MarketingClient(base_url=base_url, api_key=api_key) as client:
        sources = {ds.label: ds.id_data_source for ds in (await client.list_data_sources()).data}
        for label in labels:
            ids: list[str] = []
            if label in sources:
                offset = 0
                while True:
                    query = (Query().where("data_source_id", Operator.EQUALS, sources[label])
                             .select("order_id").order_by("order_id").page(1000, offset))
                    rows = (await client.list_resource("orders", query)).data
                    ids += [str(row["order_id"]) for row in rows]
                    if len(rows) < 1000:
                        break
                    offset += 1000
            found[label] = ids
    return found


def held_back_orders(state_url: str, source: str) -> set[str]:
    with StateStore(state_url) as state:
        return {entry.key for entry in state.entries(source, "orders", HELD_BACK)}


def check_shops(base_url: str, api_key: str, state_url: str,
                shops: dict[str, tuple[str, str, str]]) -> list[ShopCheck]:
    """``shops``: source name (also its data source label) -> (root, key, secret)."""
    listed = asyncio.run(destination_order_ids(base_url, api_key, list(shops)))
    checks = []
    for source, (root, key, secret) in shops.items():
        at_shop = {str(i) for i in shop_order_ids(root, key, secret)}
        at_destination = Counter(listed[source])
        held = held_back_orders(state_url, source)
        lost = at_shop - set(at_destination) - held
        repeated = {i for i, n in at_destination.items() if n > 1}
        foreign = set(at_destination) - at_shop
        duplicated = sum(at_destination[i] - 1 for i in repeated) + len(foreign)
        examples = tuple(f"lost {i}" for i in sorted(lost)[:3]) + tuple(
            f"repeated {i}" for i in sorted(repeated)[:3]) + tuple(
            f"not at the shop {i}" for i in sorted(foreign)[:3])
        checks.append(ShopCheck(source, len(at_shop), sum(at_destination.values()), len(held),
                                len(lost), duplicated, examples))
    return checks
