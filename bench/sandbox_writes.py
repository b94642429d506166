"""How fast the sandbox accepts bulk customer writes on this machine.

Starts ``shopsync sandbox`` as its own process, pushes N customers in batches of 50 with C
requests in flight, and prints items/s for C=1 (one batch after another) and for the chosen
concurrency, side by side, plus the sandbox's peak memory.

    python bench/sandbox_writes.py [--items 20000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY

BATCH = SYNC_RESOURCES["customers"].max_batch


def start_sandbox() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "sandbox", "--port", "0",
         "--visibility-delay", "0.5"],
        stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    match = re.search(r"at (http://\S+/v1)", process.stdout.readline())
    if not match:
        process.kill()
        raise SystemExit("the sandbox did not start")
    return process, match.group(1)


def peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


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
    process, base_url = start_sandbox()
    try:
        sequential = asyncio.run(push(base_url, args.items, 1, "s"))
        concurrent = asyncio.run(push(base_url, args.items, args.concurrency, "p"))
        peak = peak_rss_mib(process.pid)
    finally:
        process.terminate()
        process.wait()
    print(f"sandbox bulk customer writes, {args.items} items per run, batches of {BATCH}")
    print(f"  {'run':<28}{'items/s':>10}")
    print(f"  {'sequential (1 in flight)':<28}{sequential:>10.0f}")
    print(f"  {f'concurrent ({args.concurrency} in flight)':<28}{concurrent:>10.0f}")
    print(f"  ratio {concurrent / sequential:.2f}x; sandbox peak RSS {peak:.0f} MiB"
          f" holding {2 * args.items} customers")


if __name__ == "__main__":
    main()
