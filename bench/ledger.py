"""What recording outcomes in the ledger costs, alone and beside a busy event loop.

A sync records each chunk's outcomes in a worker thread (``StreamSync._record``) while its
event loop checks and pushes the next chunks. SQLite's module lets the GIL go around each
statement it steps, and the recording thread must take it back after: beside a thread
that keeps the GIL busy, each of those takes waits its turn. This records N accepted
outcomes (chunks of 2 000, the cursor moved with each, as a sync does) into a fresh SQLite
file from a worker thread, twice: alone, then beside a thread running Python without
pause, and prints the wall time and the recording thread's CPU time of each.

The outcomes are a sync's: each accepted order keeps the item sent as its payload (about
700 bytes of JSON), its own list of errors and the time its record changed, and their
events name the run (the worker thread runs in the context that began it, as
``asyncio.to_thread`` does), and the garbage collector is paced as in a sync
(``paced_for_sync``). Outcomes sharing one change time and no payload, as this measured
before, cost two thirds as much (14 instead of 21 µs of CPU each at 6a3c840).

``--baseline DIR`` runs the same first with the state store of another checkout (its
``PYTHONPATH``), in a process of its own, and prints the ratios of the two: figures of one
run, taken at the same load.

The baseline of a store that writes a statement per row, beside the busy thread, waits one
switch interval (5 ms) per row: 50 000 outcomes (the default) take minutes there.

    python bench/ledger.py [--outcomes 50000] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from connectors.sources.base import Position
from pipelines.engine.state import ItemStatus, Outcome, StateStore

try:
    from pipelines.engine.collector import paced_for_sync
except ModuleNotFoundError:  # an engine from before it: Python's own pace
    paced_for_sync = contextlib.nullcontext  # type: ignore[assignment]

CHUNK = 2_000
CHANGED = datetime(2026, 1, 1, tzinfo=UTC)


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


def chunks(count: int) -> list[list[Outcome]]:
    """``count`` accepted outcomes, as a sync records orders, in chunks."""
    return [[Outcome(str(n), hashlib.blake2b(str(n).encode(), digest_size=16).hexdigest(),
                     ItemStatus.ACCEPTED, str(n), [], order(n), CHANGED + timedelta(minutes=n))
             for n in range(start, min(start + CHUNK, count))]
            for start in range(0, count, CHUNK)]


def record_all(outcomes: list[list[Outcome]], busy: bool) -> tuple[float, float]:
    """Wall seconds and the recording thread's CPU seconds for all ``outcomes``, recorded
    from a worker thread, beside a thread that never lets the GIL rest when ``busy``."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(len(str(n)) for n in range(200))

    with tempfile.TemporaryDirectory(prefix="shopsync-ledger-") as tmp:
        store = StateStore(f"sqlite:///{Path(tmp) / 'state.db'}")
        store.start_run("bench", "orders", "sync")
        spent: list[float] = []

        def record() -> None:
            cpu = time.thread_time()
            for index, chunk in enumerate(outcomes):
                store.record("bench", "orders", chunk,
                             cursor=("orders", Position(CHANGED, str(index))))
            spent.append(time.thread_time() - cpu)

        spinner = threading.Thread(target=spin, daemon=True)
        if busy:
            spinner.start()
        worker = threading.Thread(target=contextvars.copy_context().run, args=(record,))
        started = time.perf_counter()
        with paced_for_sync():
            worker.start()
            worker.join()
        wall = time.perf_counter() - started
        stop.set()
        if busy:
            spinner.join()
        store.close()
    return wall, spent[0]


def measure(count: int) -> dict[str, Any]:
    outcomes = chunks(count)
    return {"alone": record_all(outcomes, busy=False),
            "beside a busy thread": record_all(outcomes, busy=True)}


def baseline(checkout: str, count: int) -> dict[str, Any]:
    """The same measure with the state store of ``checkout``, in a process of its own."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--outcomes", str(count),
                        "--json", out.name], env={**os.environ, "PYTHONPATH": checkout},
                       check=True, cwd=checkout)
        result: dict[str, Any] = json.loads(Path(out.name).read_text())
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outcomes", type=int, default=50_000)
    parser.add_argument("--baseline", metavar="DIR",
                        help="a checkout whose state store records the same first, to compare")
    parser.add_argument("--json", metavar="FILE", help=argparse.SUPPRESS)  # for --baseline
    args = parser.parse_args()
    before = baseline(args.baseline, args.outcomes) if args.baseline else None
    run = measure(args.outcomes)
    if args.json:
        Path(args.json).write_text(json.dumps(run))
        return
    print(f"{args.outcomes} outcomes recorded from a worker thread, in chunks of {CHUNK}"
          f" ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})")
    for name, results in ((f"baseline ({args.baseline})", before), ("this checkout", run)):
        if results is None:
            continue
        print(f"  {name}")
        print(f"    {'recorded':<24}{'wall s':>8}{'µs/item':>9}{'thread CPU s':>14}")
        for case, (wall, cpu) in results.items():
            print(f"    {case:<24}{wall:>8.2f}{wall / args.outcomes * 1e6:>9.1f}{cpu:>14.2f}")
    if before is not None:
        for case in run:
            print(f"  ratio to the baseline, {case}: "
                  f"{before[case][0] / run[case][0]:.2f}x faster, thread CPU"
                  f" {run[case][1] / before[case][1]:.2f}x")


if __name__ == "__main__":
    main()
