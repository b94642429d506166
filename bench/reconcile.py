"""Detection and repair of writes the API accepted but never applied.

Starts the sandbox with ``--drop-rate`` (default 0.05) and a fake WooCommerce shop, syncs
everything, then reconciles (deadline 0: anything not visible is re-sent at once) until no
accepted item is left unconfirmed. Prints the items the sandbox dropped, how many
reconciliation found missing and re-sent, how many it confirmed, the cycles needed, and
the time the checks took.

    python bench/reconcile.py [--orders 20000] [--drop-rate 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx

from pipelines.demo import demo_config, demo_env, demo_servers
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.marketing.settings import DEFAULT_KEY


def sandbox_stats(base_url: str) -> dict:
    root = base_url.removesuffix("/v1")
    return httpx.get(f"{root}/_sandbox/stats", headers={"spm-api-key": DEFAULT_KEY}).json()["data"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=20_000)
    parser.add_argument("--drop-rate", type=float, default=0.05)
    parser.add_argument("--max-cycles", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-") as tmp, demo_servers(
        orders=args.orders, customers=1000, products=200, visibility_delay=0.0,
        sandbox_args=["--drop-rate", str(args.drop_rate), "--seed", "7"],
    ) as (sandbox, shop):
        config = demo_config(sandbox.url, shop.url, f"sqlite:///{Path(tmp) / 'state.db'}")
        state = StateStore(config.state_url or "")
        runner = SourceRunner(config, config.sources[0], state, demo_env())
        started = time.perf_counter()
        asyncio.run(runner.run())
        sync_seconds = time.perf_counter() - started
        accepted = sum(c.get("accepted", 0) for c in state.counts("demo_shop").values())
        dropped = sum(c.get("dropped", 0) for c in sandbox_stats(sandbox.url)["writes"].values())
        print(f"sync: {accepted} items accepted in {sync_seconds:.1f}s;"
              f" the sandbox dropped {dropped} of them (drop rate {args.drop_rate})")
        print(f"  {'cycle':<6}{'checked':>9}{'visible':>9}{'resent':>8}{'parked':>8}"
              f"{'pending':>9}{'seconds':>9}")
        cycles = detected = 0
        total_seconds = 0.0
        while cycles < args.max_cycles:
            cycles += 1
            started = time.perf_counter()
            report = asyncio.run(runner.reconcile(deadline_seconds=0, max_resends=5))
            seconds = time.perf_counter() - started
            total_seconds += seconds
            totals = report.totals()
            detected += int(totals["resent"])
            pending = sum(c.get(ItemStatus.ACCEPTED.value, 0)
                          for c in state.counts("demo_shop").values())
            print(f"  {cycles:<6}{totals['checked']:>9}{totals['visible']:>9}"
                  f"{totals['resent']:>8}{totals['parked']:>8}{pending:>9}{seconds:>9.1f}")
            if pending == 0:
                break
        counts = state.counts("demo_shop")
        visible = sum(c.get("visible", 0) for c in counts.values())
        stored = sum(sandbox_stats(sandbox.url)["stored"].get(r, 0) for r in counts)
        dropped_after = sum(c.get("dropped", 0)
                            for c in sandbox_stats(sandbox.url)["writes"].values())
        state.close()
    print(f"dropped by the sandbox: {dropped} at sync, {dropped_after - dropped} more among the"
          f" re-sends; found missing and re-sent: {detected}; cycles: {cycles};"
          f" reconciliation time {total_seconds:.1f}s")
    print(f"end state: {visible} visible of {accepted} accepted; the sandbox holds {stored}")


if __name__ == "__main__":
    main()
