"""How fast the sandbox accepts bulk customer writes on this machine.

Starts ``shopsync sandbox`` as its own process, pushes N customers in batches of 50 with C
requests in flight, and prints items/s for C=1 (one batch after another) and for the chosen
concurrency, side by side, plus the sandbox's peak memory.

    python bench/sandbox_writes.py [--items 20000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY

try:
    from bench._sandbox import start_sandbox_process
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _sandbox import start_sandbox_process  # type: ignore[no-redef]

BATCH = SYNC_RESOURCES["customers"].max_batch


async def push(base_url: str, items: int, concurrency: int, prefix: str) -> float:
    batches = [
        [sample_item("customers", customer_id=f"{prefix}{i}", email=f"{prefix}{i}@example.com")
         for i in range(start, min(start + BATCH, items))]
        for start in range(0, items, BATCH)
    ]
    queue: asyncio.Queue[list[dict]] = asyncio.Queue()
    for batch in batches:
        queue.put_nowait(batch)
    accepted = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal accepted
        while not queue.empty():
            batch = queue.get_nowait()
            answer = await client.post("/customers", json=batch)
            answer.raise_for_status()
            accepted += answer.json()["sent_count"]

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, headers={"spm-api-key": DEFAULT_KEY},
                                 limits=limits, timeout=60) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    assert accepted == items, (accepted, items)
    return items / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    sandbox = start_sandbox_process("--visibility-delay", "0.5")
    try:
        sequential = asyncio.run(push(sandbox.base_url, args.items, 1, "s"))
        concurrent = asyncio.run(push(sandbox.base_url, args.items, args.concurrency, "p"))
        peak = sandbox.peak_rss_mib()
    finally:
        sandbox.stop()
    print(f"sandbox bulk customer writes, {args.items} items per run, batches of {BATCH}")
    print(f"  {'run':<28}{'items/s':>10}")
    print(f"  {'sequential (1 in flight)':<28}{sequential:>10.0f}")
    print(f"  {f'concurrent ({args.concurrency} in flight)':<28}{concurrent:>10.0f}")
    print(f"  ratio {concurrent / sequential:.2f}x; sandbox peak RSS {peak:.0f} MiB"
          f" holding {2 * args.items} customers")


if __name__ == "__main__":
    main()
