"""How much faster the bulk writer pushes than the official client's way, how close it comes
to what the sandbox can take at all, and at what memory.

Pushes N generated customers to a sandbox it starts: with the ``BulkWriter`` (batches of the
resource's max, AIMD from ``--concurrency`` up to ``--max-concurrency`` in flight), and as
the baseline — what the official client does: batches of 50 through ``client.bulk_save``,
one after another. Both use the project's retry policy, so the difference is the pacing
alone. The raw ceiling is the sandbox's ingest rate with as little as possible in the way:
the same items in the same batches, their bodies encoded before the clock starts, posted by
plain httpx with a fixed number in flight (each of ``--raw-in-flight``; the best counts)
and no retries — so it is meant for runs without faults. The writer is printed as a share
of it.

Every run pays the same input cost: none. The items are made before the clock starts (and
before ``tracemalloc`` starts, so the heap peak is the push's own; max RSS includes them),
as the engine hands the writer items it has already mapped; the writer and the baseline
encode them on the clock, which is their work, and the raw ceiling before it, which is what
makes it a ceiling.

Each run happens in a fresh child process against a fresh sandbox (same settings), so both
do the same work and each has its own peak RSS. Python-heap peaks come from a second run of
each under ``tracemalloc``, which slows Python about threefold and would distort the timing.

    python bench/push.py [--items 100000] [--concurrency 8] [--max-concurrency 64]
                         [--fault-rate 0.3] [--latency 50] [--disconnect-rate 0.1]
                         [--raw-in-flight 4,8,16,32,64]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import resource
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from typing import Any

import httpx
import orjson

from connectors.http.client import lane_transport
from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import TransientError
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item
from connectors.marketing.writer import MAX_CONCURRENCY, BulkWriter
from sandbox.marketing.settings import DEFAULT_KEY

try:
    from bench._sandbox import start_sandbox_process
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _sandbox import start_sandbox_process  # type: ignore[no-redef]

RESOURCE = "customers"
BATCH = SYNC_RESOURCES[RESOURCE].max_batch
MIB = 1024 * 1024


@dataclass
class Run:
    """What one push measured, in the child process that did it."""

    seconds: float = 0.0
    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    requests: int = 0
    attempts: int = 0
    throttled: int = 0
    max_rss_mib: float = 0.0
    heap_peak_mib: float | None = None
    limits: tuple[int, ...] = ()

    @property
    def items(self) -> int:
        return self.accepted + self.rejected + self.failed

    @property
    def rate(self) -> float:
        return self.items / self.seconds


def customers(n: int, prefix: str) -> Iterator[dict[str, Any]]:
    """N valid customers, made one at a time."""
    for i in range(n):
        yield sample_item(RESOURCE, customer_id=f"{prefix}{i}", email=f"{prefix}{i}@example.com")


async def push_with_writer(
    base_url: str, items: list[dict[str, Any]], retry: RetryPolicy, concurrency: tuple[int, int]
) -> Run:
    async with MarketingClient(base_url, DEFAULT_KEY, retry=retry) as client:
        writer = BulkWriter(client, RESOURCE, concurrency=concurrency[0],
                            max_concurrency=concurrency[1])
        started = time.perf_counter()
        summary = await writer.write_all(items)
        run = Run(time.perf_counter() - started, summary.accepted, summary.rejected,
                  summary.failed, client.stats.requests, client.stats.attempts,
                  client.stats.throttled)
        run.limits = tuple(step.limit for step in summary.concurrency_history)
    return run


async def push_like_the_official_client(
    base_url: str, items: list[dict[str, Any]], retry: RetryPolicy
) -> Run:
    run = Run()
    async with MarketingClient(base_url, DEFAULT_KEY, retry=retry) as client:

        async def send(batch: list[dict[str, Any]]) -> None:
            try:
                result = await client.bulk_save(RESOURCE, batch)
            except TransientError:
                run.failed += len(batch)
                return
            rejected = len({r.index for r in result.rejected_items})
            run.rejected += rejected
            run.accepted += len(batch) - rejected

        started = time.perf_counter()
        batch: list[dict[str, Any]] = []
        for item in items:
            batch.append(item)
            if len(batch) == BATCH:
                await send(batch)
                batch = []
        if batch:
            await send(batch)
        run.seconds = time.perf_counter() - started
        run.requests, run.attempts = client.stats.requests, client.stats.attempts
        run.throttled = client.stats.throttled
    return run


async def push_raw(base_url: str, items: list[dict[str, Any]], in_flight: int) -> Run:
    """The sandbox's ingest ceiling: the same batches, encoded before the clock starts, sent
    by ``in_flight`` senders, each on a kept-alive connection of its own (a lane, as the
    project's clients keep them); no retries, no outcomes. Not one pool of ``in_flight``
    connections: httpcore's pool looks at every connection it holds (a system call each) to
    place every request, which at 64 made the load generator, not the sandbox, the limit."""
    bodies = [(len(items[i:i + BATCH]), orjson.dumps(items[i:i + BATCH]))
              for i in range(0, len(items), BATCH)]
    run = Run()
    headers = {"spm-api-key": DEFAULT_KEY, "content-type": "application/json"}
    queue = iter(bodies)
    clients = [httpx.AsyncClient(base_url=base_url + "/", headers=headers,
                                 transport=lane_transport(), timeout=30)
               for _ in range(in_flight)]

    async def sender(client: httpx.AsyncClient) -> None:
        for size, body in queue:
            run.requests += 1
            try:
                answer = await client.post(RESOURCE, content=body)
            except httpx.TransportError:
                run.failed += size
                continue
            if answer.status_code == 200:
                run.accepted += size
            else:
                run.throttled += answer.status_code == 429
                run.failed += size

    try:
        started = time.perf_counter()
        await asyncio.gather(*(sender(client) for client in clients))
        run.seconds = time.perf_counter() - started
    finally:
        for client in clients:
            await client.aclose()
    run.attempts = run.requests
    run.limits = (in_flight,)
    return run


def one_run(kind: str, base_url: str, n: int, retry: dict[str, float],
            concurrency: tuple[int, int], trace: bool) -> dict[str, Any]:
    """Runs in a fresh child process: one push, and what it cost."""
    policy = RetryPolicy(**retry)  # type: ignore[arg-type]
    logging.getLogger("shopsync.http").setLevel(logging.ERROR)  # one line per retry otherwise
    items = list(customers(n, kind[0]))  # the input, made off the clock for every run
    if trace:
        tracemalloc.start()
    if kind == "writer":
        run = asyncio.run(push_with_writer(base_url, items, policy, concurrency))
    elif kind.startswith("raw"):
        run = asyncio.run(push_raw(base_url, items, int(kind.removeprefix("raw"))))
    else:
        run = asyncio.run(push_like_the_official_client(base_url, items, policy))
    if trace:
        run.heap_peak_mib = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
    run.max_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return asdict(run)


def stored_once_visible(root: str, timeout: float = 30.0) -> int:
    """How many customers the sandbox holds once every accepted write has been applied."""
    deadline = time.monotonic() + timeout
    while True:
        answer = httpx.get(root + "/_sandbox/stats", headers={"spm-api-key": DEFAULT_KEY})
        data = answer.json()["data"]
        if data["pending"] == 0 or time.monotonic() > deadline:
            return int(data["stored"][RESOURCE])
        time.sleep(0.1)


def measure(kind: str, sandbox_args: list[str], n: int, retry: dict[str, float],
            concurrency: tuple[int, int], trace: bool) -> tuple[Run, int]:
    """One run in a child process against a sandbox of its own; also what the sandbox holds."""
    sandbox = start_sandbox_process(*sandbox_args)
    try:
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            fields = pool.submit(one_run, kind, sandbox.base_url, n, retry, concurrency,
                                 trace).result()
        stored = stored_once_visible(sandbox.root)
    finally:
        sandbox.stop()
    run = Run(**{k: v for k, v in fields.items() if k != "limits"})
    run.limits = tuple(fields["limits"])
    return run, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8, help="the writer's start")
    parser.add_argument("--max-concurrency", type=int, default=MAX_CONCURRENCY,
                        help="the writer's ceiling")
    parser.add_argument("--raw-in-flight", default="4,8,16,32,64",
                        help="in-flight counts the raw ceiling is measured at (the best counts;"
                             " up to the writer's ceiling, or at 50 ms it is no ceiling)")
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--disconnect-rate", type=float, default=0.0,
                        help="share of connections the sandbox drops without an answer")
    parser.add_argument("--latency", type=float, default=0.0, help="ms the sandbox adds")
    parser.add_argument("--retry-after", type=int, default=0, help="of the sandbox's 429s")
    parser.add_argument("--backoff", type=float, default=RetryPolicy().initial_backoff,
                        help="first retry backoff and its jitter, in seconds (default: the"
                        " project's policy)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-heap", action="store_true", help="skip the tracemalloc runs")
    args = parser.parse_args()

    sandbox_args = ["--visibility-delay", "0.5", "--fault-rate", str(args.fault_rate),
                    "--disconnect-rate", str(args.disconnect_rate),
                    "--latency", str(args.latency), "--retry-after", str(args.retry_after),
                    "--seed", str(args.seed)]
    retry = {"initial_backoff": args.backoff, "jitter": args.backoff,
             "max_backoff": max(20 * args.backoff, 0.01)}
    concurrency = (args.concurrency, args.max_concurrency)
    results: dict[str, tuple[Run, int]] = {}
    for kind in ("writer", "baseline"):
        run, stored = measure(kind, sandbox_args, args.items, retry, concurrency, False)
        if not args.no_heap:
            traced, _ = measure(kind, sandbox_args, args.items, retry, concurrency, True)
            run.heap_peak_mib = traced.heap_peak_mib
        results[kind] = (run, stored)
    raws = {int(k): measure(f"raw{int(k)}", sandbox_args, args.items, retry, concurrency,
                            False) for k in args.raw_in_flight.split(",")}
    best = max(raws, key=lambda k: raws[k][0].rate)
    results["raw"] = raws[best]

    print(f"push {args.items} customers: sandbox fault rate {args.fault_rate}, disconnect rate"
          f" {args.disconnect_rate}, latency"
          f" {args.latency:g} ms, Retry-After {args.retry_after} s; retry backoff from"
          f" {args.backoff:g} s (+ up to {args.backoff:g} s jitter); {os.cpu_count()} CPUs")
    header = (f"  {'run':<40}{'items/s':>9}{'wall s':>8}{'accepted':>10}{'failed':>8}"
              f"{'stored':>8}{'HTTP req':>10}{'429s':>6}{'heap peak':>11}{'max RSS':>9}")
    print(header)
    labels = {"writer": f"bulk writer (AIMD {args.concurrency}..{args.max_concurrency})",
              "baseline": f"baseline ({BATCH} per batch, sequential)",
              "raw": f"raw ceiling (pre-encoded, {best} in flight)"}
    for kind, (run, stored) in results.items():
        heap = f"{run.heap_peak_mib:.1f} MiB" if run.heap_peak_mib is not None else "-"
        print(f"  {labels[kind]:<40}{run.rate:>9.0f}{run.seconds:>8.2f}{run.accepted:>10}"
              f"{run.failed:>8}{stored:>8}{run.attempts:>10}{run.throttled:>6}{heap:>11}"
              f"{run.max_rss_mib:>5.0f} MiB")
    writer, baseline, raw = (results[kind][0] for kind in ("writer", "baseline", "raw"))
    limits = writer.limits or (args.concurrency,)
    print("  raw ceiling by in-flight count: "
          + ", ".join(f"{k}: {run.rate:.0f}/s" for k, (run, _) in raws.items()))
    print(f"  ratio: {writer.rate / baseline.rate:.2f}x the items/s of the baseline;"
          f" {writer.rate / raw.rate:.0%} of the raw ceiling")
    print(f"  writer concurrency: started {limits[0]}, lowest {min(limits)}, highest"
          f" {max(limits)}, ended {limits[-1]}, {len(limits) - 1} changes")


if __name__ == "__main__":
    main()
