"""Concurrent writers and readers against one sandbox over real HTTP: what a busy client does.

``hammer`` posts ``batches`` batches of orders (unique ids), ``writers`` at a time, with
``readers`` tasks listing orders (read-backs by id, and now and then a listing of them all)
and a clock mover pushing the manual clock forward meanwhile, so that pending writes are
applied while others are accepted and listed. It counts what the client saw; the caller
compares it with what the sandbox holds once the visibility delay has passed.

``test_concurrency.py`` runs it in the tests; by hand, against a sandbox process of its own
(``--data``: persisted in a SQLite file)::

    python -m tests.sandbox.load --writers 16 --batches 300 [--data]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY
from tests.support import RunningSandbox, start_sandbox

BATCH = 50


@dataclass
class Outcome:
    """What the clients saw: items the sandbox said it accepted, answers by status, and
    requests whose connection failed before a complete answer."""

    accepted: set[str] = field(default_factory=set)
    statuses: Counter[int] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    def note(self, answer: httpx.Response) -> None:
        self.statuses[answer.status_code] += 1
        if answer.status_code >= 500 and len(self.errors) < 5:
            self.errors.append(f"{answer.request.method} {answer.status_code}: {answer.text[:200]}")


def order(batch: int, index: int) -> dict[str, Any]:
    return sample_item("orders", order_id=f"b{batch}-{index}", reference=f"R{batch}x{index}")


async def _send(client: httpx.AsyncClient, outcome: Outcome, method: str, url: str,
                **kwargs: Any) -> httpx.Response | None:
    try:
        answer = await client.request(method, url, **kwargs)
    except httpx.TransportError as exc:
        outcome.dropped[type(exc).__name__] += 1
        return None
    outcome.note(answer)
    return answer


def _by_ids(ids: list[str]) -> dict[str, str]:
    return {"limit": "1000", "fields": "order_id", "filters[0][field]": "order_id",
            "filters[0][operator]": "IN", "filters[0][values]": ",".join(ids)}


async def hammer(root: str, *, batches: int, writers: int = 16, readers: int = 4,
                 scan_every: int = 2, key: str = DEFAULT_KEY,
                 clock_step: float | None = None) -> Outcome:
    """Post ``batches`` batches of ``BATCH`` orders, ``writers`` requests in flight, with
    ``readers`` listings in flight throughout: one in ``scan_every`` lists every order (a
    whole scan), the others read the last batch accepted back by its ids, as reconciliation
    does. With ``clock_step``, also advance the manual clock by that much, again and again,
    until the writers are done."""
    outcome = Outcome()
    todo = list(range(batches))
    last: list[str] = []
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=writers + readers + 1)

    async with httpx.AsyncClient(base_url=root, headers={"spm-api-key": key}, limits=limits,
                                 timeout=120) as client:

        async def write() -> None:
            while todo:
                number = todo.pop()
                items = [order(number, i) for i in range(BATCH)]
                answer = await _send(client, outcome, "POST", "/v1/orders", json=items)
                if answer is not None and answer.status_code == 200:
                    rejected = {r["index"] for r in answer.json()["rejected_items"]}
                    accepted = [item["order_id"] for i, item in enumerate(items)
                                if i not in rejected]
                    outcome.accepted.update(accepted)
                    last[:] = accepted

        async def read() -> None:
            count = 0
            while not done.is_set():
                count += 1
                params = {"limit": "1"} if count % scan_every == 0 else _by_ids(last or ["none"])
                await _send(client, outcome, "GET", "/v1/orders", params=params)

        async def move_clock() -> None:
            while not done.is_set():
                await _send(client, outcome, "POST", "/_sandbox/clock",
                            json={"advance": clock_step})

        started = time.perf_counter()
        background = [asyncio.create_task(read()) for _ in range(readers)]
        if clock_step is not None:
            background.append(asyncio.create_task(move_clock()))
        await asyncio.gather(*(write() for _ in range(writers)))
        done.set()
        await asyncio.gather(*background)
        outcome.seconds = time.perf_counter() - started
    return outcome


def stored_ids(client: httpx.Client, ids: Iterable[str]) -> Counter[str]:
    """How many times the shop lists each of ``ids`` (read back by id, 1000 at a time)."""
    found: Counter[str] = Counter()
    wanted = sorted(ids)
    for start in range(0, len(wanted), 1000):
        page = client.get("/orders", params=_by_ids(wanted[start:start + 1000]))
        page.raise_for_status()
        found.update(row["order_id"] for row in page.json()["data"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--scan-every", type=int, default=2)
    parser.add_argument("--data", action="store_true", help="persist in a SQLite file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        options = ["--visibility-delay", "1", "--manual-clock"]
        if args.data:
            options += ["--data", f"{folder}/sandbox.sqlite"]
        running = start_sandbox(*options, own_process=True)
        logged: Counter[str] = Counter()
        threading.Thread(target=_drain, args=(running, logged), daemon=True).start()
        try:
            outcome = asyncio.run(hammer(running.root, batches=args.batches,
                                         writers=args.writers, readers=args.readers,
                                         scan_every=args.scan_every, clock_step=0.2))
            running.advance_clock(1)
            client = running.client()
            stats = client.get(running.root + "/_sandbox/stats").json()["data"]
            stored = stored_ids(client, outcome.accepted)
        finally:
            running.stop()
    twice = sum(1 for n in stored.values() if n > 1)
    print(f"{args.batches} batches of {BATCH} orders, {args.writers} in flight,"
          f" {args.readers} readers (1 in {args.scan_every} listings a scan),"
          f" {'--data' if args.data else 'in memory'}:"
          f" {outcome.seconds:.1f} s")
    print(f"  accepted {len(outcome.accepted)}, stored {stats['stored']['orders']},"
          f" listed by id {len(stored)} ({twice} twice),"
          f" accepted but not stored {len(outcome.accepted - stored.keys())},"
          f" pending {stats['pending']}")
    print(f"  answers {dict(sorted(outcome.statuses.items()))},"
          f" dropped connections {dict(outcome.dropped)}")
    print(f"  server log: {logged['Traceback']} tracebacks")
    for line in outcome.errors:
        print("  " + line)


def _drain(running: RunningSandbox, logged: Counter[str]) -> None:
    """Read the sandbox's output as it comes (a full pipe would stop it), counting
    tracebacks."""
    assert isinstance(running.process, subprocess.Popen) and running.process.stdout
    for line in running.process.stdout:
        logged[line.split(" ", 1)[0].strip()] += 1


if __name__ == "__main__":
    main()
