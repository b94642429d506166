"""Extraction speed of the PrestaShop connector from the fake shop under a rate budget.

Starts a fake PrestaShop shop (1.7, two languages) with N orders (default 20 000) whose
host-style rate limit is the budget (default 10 requests/s: PrestaShop's core has no limit,
so this is the figure we assume for a shared host's or a WAF's rule in front of it), reads
the ``orders`` stream whole — each page with its customers' emails looked up — at each page
size, with the connector pacing itself to the budget (``requests_per_second``) and, for
comparison, without pacing (429 + Retry-After). Prints records/s, the requests made, the
429s received and the share of the budget used (requests answered ÷ (seconds × budget)).

    python bench/extract_prestashop.py [--orders 20000] [--rate-limit 10] [--page-size 100 250]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time

import httpx

from connectors.sources.prestashop import PrestaShopConnector
from sandbox.shops.prestashop.launch import start


async def extract(root: str, key: str, page_size: int, pace: float | None) -> tuple[int, float, int]:
    """(records, seconds, requests) of one whole read of ``orders``."""
    async with PrestaShopConnector(root, key, page_size=page_size, timezone="Europe/Paris",
                                   requests_per_second=pace) as source:
        started = time.perf_counter()
        records = 0
        async for page in source.read("orders"):
            records += len(page)
        return records, time.perf_counter() - started, source.client.requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=20_000)
    parser.add_argument("--rate-limit", type=float, default=10.0,
                        help="the budget, in requests per second (the fake's 429 limit)")
    parser.add_argument("--page-size", type=int, nargs="+", default=[100, 250])
    args = parser.parse_args()
    logging.getLogger("shopsync.http").setLevel(logging.ERROR)  # the 429 retries are counted
    shop = start("--orders", str(args.orders), "--customers", "2000", "--products", "200",
                 "--rate-limit", str(args.rate_limit))
    try:
        stats = httpx.Client(base_url=shop.root + "/__fake__", auth=(shop.key, ""))
        print(f"extract orders from a fake PrestaShop shop: {args.orders} orders, 2000"
              f" customers, budget {args.rate_limit:g} requests/s")
        print(f"  {'page size':>9}{'pacing':>9}{'records':>9}{'seconds':>9}{'records/s':>11}"
              f"{'requests':>10}{'429s':>6}{'budget used':>13}")
        runs = [(size, args.rate_limit) for size in args.page_size] + [(args.page_size[0], None)]
        for page_size, pace in runs:
            time.sleep(1.5)  # let the bucket fill up again between runs
            before = stats.get("/stats").json()
            records, seconds, _ = asyncio.run(extract(shop.root, shop.key, page_size, pace))
            after = stats.get("/stats").json()
            answered = after["requests"] - before["requests"]
            throttled = after["throttled"] - before["throttled"]
            share = (answered - throttled) / (seconds * args.rate_limit)
            print(f"  {page_size:>9}{'paced' if pace else 'none':>9}{records:>9}{seconds:>9.1f}"
                  f"{records / seconds:>11.0f}{answered:>10}{throttled:>6}{share:>12.0%}")
        stats.close()
    finally:
        shop.stop()


if __name__ == "__main__":
    main()
