"""What a request budget shared through the state database costs each request: the time
one slot reservation takes (``StateStore.reserve_slots``, one statement in a transaction of
its own), on SQLite and on PostgreSQL, with one reserver and with several at once (each a
thread with a store and connections of its own, as processes would have), and the load
average it was measured at.

    python bench/budgets.py [--reservations 2000] [--reservers 1 8]
    SHOPSYNC_TEST_POSTGRES_URL=postgresql+psycopg://… python bench/budgets.py

The reservations are of a budget far faster than they come (``interval`` 1 µs), so nothing
waits on a slot: what is timed is the database alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pipelines.engine.state import StateStore


def timed(url: str, reservers: int, each: int) -> list[float]:
    """Seconds each reservation took, ``reservers`` at once on one budget."""
    stores = [StateStore(url) for _ in range(reservers)]
    start = threading.Barrier(reservers)

    def reserve(store: StateStore) -> list[float]:
        start.wait()
        took = []
        for _ in range(each):
            began = time.perf_counter()
            store.reserve_slots("bench budget", 1e-6)
            took.append(time.perf_counter() - began)
        return took

    try:
        with ThreadPoolExecutor(reservers) as pool:
            return [t for times in pool.map(reserve, stores) for t in times]
    finally:
        for store in stores:
            store.close()


def report(backend: str, url: str, reservers: list[int], total: int) -> None:
    for n in reservers:
        took = sorted(timed(url, n, max(1, total // n)))
        p50, p99 = took[len(took) // 2], took[int(len(took) * 0.99)]
        print(f"{backend:<11} {n:>3} reserver(s): median {p50 * 1e3:6.2f} ms,"
              f" p99 {p99 * 1e3:6.2f} ms, mean {statistics.fmean(took) * 1e3:6.2f} ms;"
              f" {len(took) / sum(took) * n:7.0f} reservations/s together")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reservations", type=int, default=2000)
    parser.add_argument("--reservers", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        report("SQLite", f"sqlite:///{folder}/state.db", args.reservers, args.reservations)
    pg = os.environ.get("SHOPSYNC_TEST_POSTGRES_URL")
    if not pg:
        print("PostgreSQL: skipped (set SHOPSYNC_TEST_POSTGRES_URL)")
        return
    admin = create_engine(pg, isolation_level="AUTOCOMMIT")
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(pg).update_query_dict({"options": f"-csearch_path={schema}"})
        report("PostgreSQL", url.render_as_string(hide_password=False), args.reservers,
               args.reservations)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    main()
