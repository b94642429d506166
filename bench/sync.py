"""A full sync of a large fake WooCommerce shop into the sandbox, then an unchanged rerun.

Starts the sandbox and a fake shop with N orders (default 100 000) on free ports, runs the
engine over every stream, and prints records/s, the time per stream, the peak memory of the
syncing process, and the second run's time and write count (which should be zero).

    python bench/sync.py [--orders 100000] [--customers 2000] [--products 500]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from pipelines.demo import demo_config, demo_env, demo_servers
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=100_000)
    parser.add_argument("--customers", type=int, default=2_000)
    parser.add_argument("--products", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-") as tmp, demo_servers(
        orders=args.orders, customers=args.customers, products=args.products,
        visibility_delay=0.0,
    ) as (sandbox, shop):
        config = demo_config(sandbox.url, shop.url, f"sqlite:///{Path(tmp) / 'state.db'}")
        state = StateStore(config.state_url or "")
        runner = SourceRunner(config, config.sources[0], state, demo_env())
        started = time.perf_counter()
        first = asyncio.run(runner.run())
        first_seconds = time.perf_counter() - started
        rss_first = peak_rss_mib()
        started = time.perf_counter()
        second = asyncio.run(runner.run())
        second_seconds = time.perf_counter() - started
        state.close()

    records = sum(r.records for r in first)
    print(f"full sync of a fake WooCommerce shop: {args.orders} orders, {args.customers}"
          f" customers, {args.products} products")
    print(f"  {'stream':<12}{'records':>10}{'seconds':>10}{'records/s':>12}{'pushed':>10}"
          f"{'accepted':>10}{'quarantined':>13}")
    for report in first:
        print(f"  {report.stream:<12}{report.records:>10}{report.seconds:>10.1f}"
              f"{report.records_per_second:>12.0f}{report.total('pushed'):>10}"
              f"{report.total('accepted'):>10}{report.total('quarantined'):>13}")
    print(f"  total: {records} records in {first_seconds:.1f}s = {records / first_seconds:.0f}"
          f" records/s; peak RSS of the syncing process {rss_first:.0f} MiB")
    pushed_again = sum(r.total("pushed") for r in second)
    read_again = sum(r.records for r in second)
    print(f"  unchanged rerun: {second_seconds:.1f}s, {read_again} records read,"
          f" {pushed_again} items written")


if __name__ == "__main__":
    main()
