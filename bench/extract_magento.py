"""Extraction speed of the Magento connector from the fake shop under a rate budget.

Starts a fake Magento shop with N orders (default 20 000) whose CDN-style rate limit is the
budget (default 10 requests/s: Magento Open Source has no limit of its own, so this is the
figure we assume for a WAF/Fastly rule in front of a self-hosted or Cloud shop), reads the
``orders`` stream whole with the connector at each page size, and prints records/s, the
requests made, the 429s received, and the share of the budget used
(requests ÷ (seconds × budget)).

    python bench/extract_magento.py [--orders 20000] [--rate-limit 10] [--page-size 100 300]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time

import httpx

from connectors.sources.magento import MagentoConnector
from sandbox.shops.magento.launch import start


async def extract(api_url: str, token: str, page_size: int) -> tuple[int, float, int]:
    """(records, seconds, requests) of one whole read of ``orders``."""
    async with MagentoConnector(api_url, token, page_size=page_size) as source:
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
    parser.add_argument("--page-size", type=int, nargs="+", default=[100, 300])
    args = parser.parse_args()
    logging.getLogger("shopsync.http").setLevel(logging.ERROR)  # the 429 retries are counted
    shop = start("--orders", str(args.orders), "--customers", "2000", "--products", "200",
                 "--rate-limit", str(args.rate_limit))
    try:
        stats = httpx.Client(base_url=shop.root + "/__fake__",
                             headers={"authorization": f"Bearer {shop.token}"})
        print(f"extract orders from a fake Magento shop: {args.orders} orders, budget"
              f" {args.rate_limit:g} requests/s")
        print(f"  {'page size':>9}{'records':>10}{'seconds':>9}{'records/s':>11}"
              f"{'requests':>10}{'429s':>6}{'budget used':>13}")
        for page_size in args.page_size:
            time.sleep(1.5)  # let the bucket fill up again between runs
            before = stats.get("/stats").json()
            records, seconds, requests = asyncio.run(extract(shop.api_url, shop.token, page_size))
            after = stats.get("/stats").json()
            answered = after["requests"] - before["requests"]
            throttled = after["throttled"] - before["throttled"]
            share = (answered - throttled) / (seconds * args.rate_limit)
            print(f"  {page_size:>9}{records:>10}{seconds:>9.1f}{records / seconds:>11.0f}"
                  f"{requests:>10}{throttled:>6}{share:>12.0%}")
        stats.close()
    finally:
        shop.stop()


if __name__ == "__main__":
    main()
