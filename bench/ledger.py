"""What recording outcomes in the ledger costs, alone and beside a busy event loop.

A sync records each chunk's outcomes in a worker thread (``StreamSync._record``) while its
event loop looks up the next chunk's states in the ledger, checks and pushes it. SQLite's
module lets the GIL go around each statement it steps, and the recording thread must take
it back after: beside a thread that keeps the GIL busy, each of those takes waits its turn.
This records N accepted outcomes (chunks of 2 000, the cursor moved with each, as a sync
does) into a fresh SQLite file from a worker thread, the main thread looking up each
chunk's states first, twice: alone, then beside a thread running Python without pause, and
prints the wall time and the CPU time of the recording (the worker's) and of the look-ups
(the main thread's), the process's peak RSS and what the recording wrote to storage (the
WAL and its checkpoints, in all and per outcome). ``--every N`` prints the CPU figures of
each N outcomes too: what recording costs as the file grows (a sync of a million orders
records 1.3 million items into one file; ``--cases alone`` skips the slower busy case,
``--folder`` puts the growing file somewhere with room).

The outcomes are a sync's: each accepted order keeps the item sent as its payload (about
700 bytes of JSON), its own list of errors and the time its record changed, and their
events name the run (the worker thread runs in the context that began it, as
``asyncio.to_thread`` does), and the garbage collector is paced as in a sync
(``paced_for_sync``). Their keys come in a shop's change order (``--shape shop``, the
default): a chunk's keys land all over the key indexes, as a real sync's do, and at a
million entries that costs more than twice what ascending keys (``--shape sequential``,
what this measured before) cost: 37 instead of 17 µs of CPU an outcome at c6b6ae3.

``--baseline DIR`` runs the same first with the state store of another checkout (its
``PYTHONPATH``), in a process of its own, and prints the ratios of the two: figures of one
run, taken at the same load.

The baseline of a store that writes a statement per row, beside the busy thread, waits one
switch interval (5 ms) per row: 50 000 outcomes (the default) take minutes there.

    python bench/ledger.py [--outcomes 50000] [--shape shop|sequential] [--every N]
        [--cases both|alone|thread] [--folder DIR] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import hashlib
import json
import os
import queue
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from connectors.sources.base import Position
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from sandbox.shops.timeline import BULK_EDITS, change_times

try:
    from pipelines.engine.collector import paced_for_sync
except ModuleNotFoundError:  # an engine from before it: Python's own pace
    paced_for_sync = contextlib.nullcontext  # type: ignore[assignment]

CHUNK = 2_000
CHANGED = datetime(2026, 1, 1, tzinfo=UTC)
#: the fake shop's seed for the change times of ``--shape shop``
SEED = 7


def order(n: int) -> dict[str, Any]:
    """The order item a sync sends for record ``n``: an accepted outcome's payload."""
    at = f"{CHANGED + timedelta(minutes=n):%Y-%m-%dT%H:%M:%SZ}"
    email = f"guest.{n}@example.net"
    return {
        "order_id": str(n), "reference": str(n), "lang": "en", "status_id": "completed",
        "customer": {"customer_id": f"guest:{email}", "email": email, "created_at": at},
        "products": [{"product_id": n % 500, "product_variation_id": None, "price": 69.6,
                      "price_without_tax": 58.0, "quantity": 1 + n % 3}],
        "cart_id": hashlib.md5(str(n).encode()).hexdigest(), "cart_updated_at": at,  # noqa: S324
        "amount": 139.2, "amount_without_tax": 116.0, "shipping_costs": 0.0,
        "shipping_costs_without_tax": 0.0, "currency": "EUR", "is_confirmed": True,
        "created_at": at, "updated_at": at, "carrier_id": "flat_rate", "voucher_used": None,
        "voucher_value": None, "id_data_source": 2,
    }


def keys_in_order(count: int, shape: str) -> list[int]:
    """The record ids of ``count`` orders in the order a sync reads them: ``sequential``,
    or ``shop``: by last change, as a WooCommerce sync lists them (``orderby=modified``),
    the fake shop's change times (``sandbox/shops/timeline.py``: most orders change within
    days of their creation, some months later, 15 % in one bulk edit), so that each chunk
    adds its keys all over the ledger's key indexes, as a sync's chunks do."""
    if shape == "sequential":
        return list(range(count))
    pairs = change_times(random.Random(SEED), count, BULK_EDITS["orders"])
    return [n for _, n in sorted((changed, n) for n, (_, changed) in enumerate(pairs))]


def chunks(count: int, shape: str = "sequential") -> Iterator[list[Outcome]]:
    """``count`` accepted outcomes, as a sync records orders, in chunks (made as they are
    recorded: a million orders' payloads would not fit in memory at once)."""
    order_ids = keys_in_order(count, shape)
    for start in range(0, count, CHUNK):
        yield [Outcome(str(n), hashlib.blake2b(str(n).encode(), digest_size=16).hexdigest(),
                       ItemStatus.ACCEPTED, str(n), [], order(n), CHANGED + timedelta(minutes=n))
               for n in order_ids[start:start + CHUNK]]


@dataclass
class Recorded:
    """CPU seconds so far: the recording thread's in ``record``, the main thread's in
    ``states``, and the figures of each ``every`` outcomes (outcomes, µs each of both)."""

    record: float = 0.0
    states: float = 0.0
    steps: list[tuple[int, float, float]] = field(default_factory=list)

    def step(self, done: int, since: tuple[int, float, float]) -> tuple[int, float, float]:
        """Note the figures from ``since`` (outcomes, record, states) to now."""
        n = done - since[0]
        self.steps.append((done, (self.record - since[1]) / n * 1e6,
                           (self.states - since[2]) / n * 1e6))
        return done, self.record, self.states


def record_all(count: int, shape: str, busy: bool, every: int,
               folder: str | None) -> dict[str, Any]:
    """Record ``count`` outcomes from a worker thread, beside a thread that never lets the
    GIL rest when ``busy``, as a sync does: the main thread looks up each chunk's states
    (``StateStore.states``) while the chunk before is recorded. Wall seconds, CPU seconds of
    both, the figures of each ``every`` outcomes and the process's peak RSS."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(len(str(n)) for n in range(200))

    with tempfile.TemporaryDirectory(prefix="shopsync-ledger-", dir=folder) as tmp:
        store = StateStore(f"sqlite:///{Path(tmp) / 'state.db'}")
        store.start_run("bench", "orders", "sync")
        spent, pending = Recorded(), queue.Queue[tuple[int, list[Outcome]] | None](maxsize=1)

        def record() -> None:
            since = (0, 0.0, 0.0)
            while (next_chunk := pending.get()) is not None:
                index, outcomes = next_chunk
                cpu = time.thread_time()
                store.record("bench", "orders", outcomes,
                             cursor=("orders", Position(CHANGED, str(index))))
                spent.record += time.thread_time() - cpu
                done = min((index + 1) * CHUNK, count)
                if every and (done - since[0] >= every or done == count):
                    since = spent.step(done, since)

        spinner = threading.Thread(target=spin, daemon=True)
        if busy:
            spinner.start()
        worker = threading.Thread(target=contextvars.copy_context().run, args=(record,))
        started, blocks = time.perf_counter(), written_blocks()
        with paced_for_sync():
            worker.start()
            for index, outcomes in enumerate(chunks(count, shape)):
                cpu = time.thread_time()
                store.states("bench", "orders", [o.key for o in outcomes])
                spent.states += time.thread_time() - cpu
                pending.put((index, outcomes))
            pending.put(None)
            worker.join()
        wall = time.perf_counter() - started
        store.close()  # its last checkpoint counted too
        written = (written_blocks() - blocks) * 512
        stop.set()
        if busy:
            spinner.join()
    return {"wall": wall, "record": spent.record, "states": spent.states,
            "steps": spent.steps, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "written": written}


def written_blocks() -> int:
    """Blocks of 512 bytes this process has sent to storage so far (Linux counts them as
    they are written to the page cache): the ledger's WAL and its checkpoints."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_oublock


def measure(args: argparse.Namespace) -> dict[str, Any]:
    cases = {"alone": False, "beside a busy thread": True}
    return {case: record_all(args.outcomes, args.shape, busy, args.every, args.folder)
            for case, busy in cases.items() if args.cases in ("both", case.split()[-1])}


def baseline(checkout: str, argv: list[str]) -> dict[str, Any]:
    """The same measure with the state store of ``checkout``, in a process of its own."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv,
                        "--json", out.name], env={**os.environ, "PYTHONPATH": checkout},
                       check=True, cwd=checkout)
        result: dict[str, Any] = json.loads(Path(out.name).read_text())
        return result


def show(name: str, results: dict[str, Any], count: int) -> None:
    print(f"  {name}")
    print(f"    {'recorded':<22}{'wall s':>8}{'record CPU s':>14}{'µs/item':>9}"
          f"{'states CPU s':>14}{'µs/item':>9}{'peak RSS MiB':>14}{'written MiB':>13}"
          f"{'KiB/item':>10}")
    for case, r in results.items():
        print(f"    {case:<22}{r['wall']:>8.2f}{r['record']:>14.2f}"
              f"{r['record'] / count * 1e6:>9.1f}{r['states']:>14.2f}"
              f"{r['states'] / count * 1e6:>9.1f}{r['rss_mib']:>14.0f}"
              f"{r.get('written', 0) / 2**20:>13.0f}{r.get('written', 0) / count / 1024:>10.1f}")
        for done, record_us, states_us in r["steps"]:
            print(f"      up to {done:>9} outcomes: record {record_us:6.1f} µs/item,"
                  f" states {states_us:5.1f} µs/item")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outcomes", type=int, default=50_000)
    parser.add_argument("--shape", choices=("shop", "sequential"), default="shop",
                        help="the order of the keys: a shop's change order, or ascending")
    parser.add_argument("--cases", choices=("both", "alone", "thread"), default="both",
                        help="record alone, beside a busy thread, or both")
    parser.add_argument("--every", type=int, default=0, metavar="N",
                        help="also print the CPU figures of each N outcomes")
    parser.add_argument("--folder", help="where the database file grows (default: the system's)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="a checkout whose state store records the same first, to compare")
    parser.add_argument("--json", metavar="FILE", help=argparse.SUPPRESS)  # for --baseline
    args = parser.parse_args()
    argv = [f"--outcomes={args.outcomes}", f"--shape={args.shape}", f"--cases={args.cases}",
            f"--every={args.every}", *([f"--folder={args.folder}"] if args.folder else [])]
    before = baseline(args.baseline, argv) if args.baseline else None
    run = measure(args)
    if args.json:
        Path(args.json).write_text(json.dumps(run))
        return
    print(f"{args.outcomes} outcomes ({args.shape}) recorded from a worker thread, in chunks"
          f" of {CHUNK} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})")
    if before is not None:
        show(f"baseline ({args.baseline})", before, args.outcomes)
    show("this checkout", run, args.outcomes)
    if before is not None:
        for case in run:
            print(f"  ratio to the baseline, {case}: "
                  f"{before[case]['wall'] / run[case]['wall']:.2f}x faster, record CPU"
                  f" {run[case]['record'] / before[case]['record']:.2f}x, states CPU"
                  f" {run[case]['states'] / before[case]['states']:.2f}x")


if __name__ == "__main__":
    main()
