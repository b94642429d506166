"""Extraction speed of the Shopify connector from the fake shop, at a realistic rate budget.

Starts a fake Shopify shop with N orders (default 20 000) whose cost bucket is the current
Standard plan's (2000 points, restored at 100 points/s; ``--plus`` for Plus: 10 000 and
1000/s), and bulk operations writing 5000 objects/s. Then reads:

1. every order (an initial import: the window holds more than ``bulk_threshold`` records,
   so a bulk operation reads it), and
2. an incremental window of ``--changed`` orders touched after it (paged queries, paced by
   the cost budget),

and prints records/s and the share of the cost budget used: points spent over the points
the bucket could give during the read (what it held at the start plus its restore rate
times the time taken).

    python bench/extract_shopify.py [--orders 20000] [--changed 200] [--plus]
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.sources.base import Position
from connectors.sources.shopify import ShopifyConnector
from sandbox.shops.shopify.launch import start

try:
    from bench._extract import Read, cpu_seconds, parser, read_whole, server_pid
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _extract import (  # type: ignore[no-redef]
        Read,
        cpu_seconds,
        parser,
        read_whole,
        server_pid,
    )


async def extract(root: str, token: str, after: Position | None = None,
                  **options: Any) -> tuple[Read, dict[str, float]]:
    """One whole read of ``orders``, and what the connector's cost budget counted."""
    source = ShopifyConnector(root, token, **options)
    read = await read_whole(source, after=after)
    budget = source.budget
    return read, {"spent": budget.spent, "requested": budget.requested,
                  "throttled": budget.throttled, "waited": budget.waited}


def report(title: str, read: Read, spent: float, bucket: float, rate: float,
           served: float) -> None:
    capacity = bucket + rate * read.seconds
    print(f"  {title}: {read.records} orders in {read.seconds:.1f}s = {read.per_second:.0f}"
          f" records/s; {spent:.0f} points spent of {capacity:.0f} available ="
          f" {spent / capacity:.1%} of the budget; CPU: fake {served:.1f}s, reader"
          f" {read.cpu:.1f}s")


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--changed", type=int, default=200)
    options.add_argument("--plus", action="store_true", help="Shopify Plus budget")
    args = options.parse_args()
    bucket, rate = (10_000.0, 1000.0) if args.plus else (2000.0, 100.0)
    shop = start("--orders", str(args.orders), "--customers", str(max(10, args.orders // 10)),
                 "--products", "200", "--bucket-size", str(bucket), "--restore-rate", str(rate),
                 "--bulk-objects-per-second", "5000", "--bulk-latency", "2")
    try:
        print(f"Shopify connector, fake shop with {args.orders} orders; cost bucket {bucket:.0f}"
              f" points restored at {rate:.0f}/s ({'Plus' if args.plus else 'Standard'} plan),"
              " bulk jobs writing 5000 objects/s")
        served = cpu_seconds(server_pid(shop))
        read, first = asyncio.run(extract(shop.root, shop.token, bulk_poll_interval=1.0))
        served = cpu_seconds(server_pid(shop)) - served
        report("initial import (bulk operation)", read, first["spent"], bucket, rate, served)
        fake = shop.fake()
        stats = fake.get("/stats").json()
        print(f"    bulk jobs {stats.get('bulk_operations', 0)}, requests {stats['requests']},"
              f" throttled {stats.get('throttled', 0)}")
        ids = fake.get("/orders/ids").json()["ids"][: args.changed]
        cursor = datetime.now(UTC) - timedelta(seconds=5)
        fake.post("/orders/touch", json={"ids": ids})
        time.sleep(3)  # the bucket refills a little, as between two scheduled syncs
        before = cpu_seconds(server_pid(shop))
        read, second = asyncio.run(extract(shop.root, shop.token, after=Position(cursor)))
        report(f"incremental window of {args.changed} changed orders (paged)", read,
               second["spent"] - first["spent"], bucket, rate,
               cpu_seconds(server_pid(shop)) - before)
        print(f"    waited for the budget {second['waited'] - first['waited']:.1f}s,"
              f" throttled answers {second['throttled'] - first['throttled']}")
    finally:
        shop.stop()


if __name__ == "__main__":
    main()
