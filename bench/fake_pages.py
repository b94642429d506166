"""What a page of orders costs each fake shop, in a small shop and a large one.

Starts each platform's fake at each size (``--sizes``), reads ``--pages`` pages of orders
with the platform's connector (Shopify paged, with an unlimited cost bucket) from each
starting point (``--starts``): ``start``, a full read from the beginning (the case where a
page that scans the shop costs the most), and ``bulk``, a read resuming just before the
second of the generated bulk edit (more orders changed in one second than a page holds:
the reader walks that second by id, the tie a large shop's sync meets), and prints the CPU
milliseconds a page cost the fake's server process and the reading process, and the ratio
of the fake's cost at the largest size to the smallest: near 1 when a page costs the same
whatever the shop's size. ``--baseline DIR`` serves, side by side in the same run, the
fakes of another checkout (its ``sandbox`` package, e.g. ``/work/main``) read by the same
connectors, and prints this checkout's cost as a share of it.

    python bench/fake_pages.py [--sizes 10000,200000] [--pages 30] [--starts start,bulk]
        [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

from connectors.sources.base import Position, SourceConnector
from connectors.sources.magento import MagentoConnector
from connectors.sources.prestashop import PrestaShopConnector
from connectors.sources.shopify import ShopifyConnector
from connectors.sources.woocommerce import WooCommerceConnector
from sandbox.shops.timeline import BULK_EDITS

try:
    from bench._extract import cpu_seconds, server_pid
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _extract import cpu_seconds, server_pid  # type: ignore[no-redef]

WARM_UP = 2  # pages read before timing (the first builds the sorted views)
#: platform -> (extra options of its fake, the connector on a running fake)
PLATFORMS: dict[str, tuple[tuple[str, ...], Callable[[Any], SourceConnector]]] = {
    "woocommerce": ((), lambda s: WooCommerceConnector(s.api_url, s.key, s.secret, page_size=100)),
    "magento": ((), lambda s: MagentoConnector(s.api_url, s.token, page_size=100)),
    "prestashop": ((), lambda s: PrestaShopConnector(s.root, s.key, page_size=100,
                                                     timezone="Europe/Paris")),
    "shopify": (("--bucket-size", "1000000000", "--restore-rate", "1000000000"),
                lambda s: ShopifyConnector(s.root, s.token, bulk_threshold=0)),
}


#: where a read starts: from the beginning, or one second before the orders' bulk edit
STARTS: dict[str, Position | None] = {
    "start": None,
    "bulk": Position(datetime.fromtimestamp(BULK_EDITS["orders"][0] - 1, UTC)),
}


async def _pages(source: SourceConnector, after: Position | None) -> AsyncIterator[int]:
    try:
        # up to now, as the engine reads (a settled second: a bound every page carries)
        async for page in source.read("orders", after=after, until=datetime.now(UTC)):
            yield len(page)
    finally:
        await source.aclose()


async def _measure(shop: Any, connector: Callable[[Any], SourceConnector], pages: int,
                   after: Position | None) -> tuple[float, float, float]:
    """CPU ms per page of the fake and of the reader, and records per page, over ``pages``
    pages after the warm-up."""
    pid, read, records = server_pid(shop), 0, 0
    served = reader = 0.0
    async for size in _pages(connector(shop), after):
        read += 1
        if read == WARM_UP:
            served, reader = cpu_seconds(pid), cpu_seconds()
        elif read > WARM_UP:
            records += size
            if read == WARM_UP + pages:
                break
    timed = max(read - WARM_UP, 1)
    return ((cpu_seconds(pid) - served) * 1000 / timed, (cpu_seconds() - reader) * 1000 / timed,
            records / timed)


def _run(platform: str, orders: int, pages: int, checkout: str | None,
         starts: list[str]) -> list[tuple[float, float, float]]:
    """Start the fake (from ``checkout``'s ``sandbox`` when given: ``python -m`` puts its
    working directory first on the path), time its pages from each of ``starts``, stop it."""
    options, connector = PLATFORMS[platform]
    launch = importlib.import_module(f"sandbox.shops.{platform}.launch")
    here = os.getcwd()
    os.chdir(checkout or here)
    try:
        shop = launch.start("--orders", str(orders), "--customers", "2000", "--products", "200",
                            *options)
    finally:
        os.chdir(here)
    try:
        return [asyncio.run(_measure(shop, connector, pages, STARTS[start])) for start in starts]
    finally:
        shop.stop()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--sizes", default="10000,200000", help="orders in each shop")
    options.add_argument("--pages", type=int, default=30, help="pages timed at each size")
    options.add_argument("--starts", default=",".join(STARTS),
                         help=f"where reads start: {', '.join(STARTS)}")
    options.add_argument("--only", nargs="+", choices=list(PLATFORMS), default=list(PLATFORMS))
    options.add_argument("--baseline", help="a checkout whose fakes to compare with")
    args = options.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    starts = [s for s in args.starts.split(",") if s]
    if unknown := set(starts) - STARTS.keys():
        options.error(f"unknown --starts {', '.join(sorted(unknown))}: choose among {', '.join(STARTS)}")
    codes = [("baseline", args.baseline), ("this", None)] if args.baseline else [("this", None)]
    print(f"CPU ms per page of orders ({args.pages} pages after {WARM_UP}; fake = its server"
          f" process, reader = the connector's process; load {os.getloadavg()[0]:.1f})")
    print(f"  {'platform':<12}{'code':<10}{'from':<7}{'orders':>8}{'records/page':>14}"
          f"{'fake ms':>9}{'reader ms':>11}")
    for platform in args.only:
        #: (code, start) -> the fake's ms at each size
        fake: dict[tuple[str, str], list[float]] = {}
        for name, checkout in codes:
            for orders in sizes:
                for start, (served, reader, per_page) in zip(
                        starts, _run(platform, orders, args.pages, checkout, starts), strict=True):
                    fake.setdefault((name, start), []).append(served)
                    print(f"  {platform:<12}{name:<10}{start:<7}{orders:>8}{per_page:>14.0f}"
                          f"{served:>9.1f}{reader:>11.1f}", flush=True)
        for start in starts:
            growth = ", ".join(f"{name} {costs[-1] / costs[0]:.2f}x"
                               for (name, at), costs in fake.items() if at == start)
            line = f"    from {start}: fake ms at {sizes[-1]} / at {sizes[0]} orders: {growth}"
            if args.baseline:
                shares = ", ".join(
                    f"{orders}: {this / base:.0%}" for orders, this, base in
                    zip(sizes, fake["this", start], fake["baseline", start], strict=True))
                line += f"; this checkout's fake ms as a share of the baseline's: {shares}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
