"""What every ``bench/extract_<platform>.py`` shares: its options, timing one whole read of a
stream, and, for a platform whose fake refuses requests past a rate limit, the runs and
the table of records/s and budget use; each script keeps only its platform's specifics.

The budget used by a run is the requests the fake answered (less the 429s it refused them
with) over what the limit allowed during the run: ``seconds × requests per second``. Each run
also says the CPU seconds of the fake's server process and of the reading process, so that
a reader sees which of the two holds the other back.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol, TypeVar

import httpx

from connectors.sources.base import Position, RawRecord, SourceConnector
from sandbox.serving import Served


def parser(doc: str, *, page_sizes: Sequence[int] | None = None,
           rate_limit: float | None = None) -> argparse.ArgumentParser:
    """``--orders``, and ``--page-size`` and ``--rate-limit`` when given their defaults."""
    options = argparse.ArgumentParser(description=doc.splitlines()[0])
    options.add_argument("--orders", type=int, default=20_000)
    if rate_limit is not None:
        options.add_argument("--rate-limit", type=float, default=rate_limit,
                             help="the budget, in requests per second (the fake's 429 limit)")
    if page_sizes is not None:
        options.add_argument("--page-size", type=int, nargs="+", default=list(page_sizes))
    return options


@dataclass(frozen=True)
class Read:
    """One whole read of a stream."""

    records: int
    seconds: float
    #: what ``items`` counted in the records (an order's lines), 0 when not asked
    items: int = 0
    #: CPU seconds the reading process spent on the read
    cpu: float = 0.0

    @property
    def per_second(self) -> float:
        return self.records / self.seconds


async def read_whole(source: SourceConnector, stream: str = "orders", *,
                     after: Position | None = None,
                     items: Callable[[RawRecord], int] | None = None) -> Read:
    """Read ``stream`` whole with ``source`` (closed afterwards), timing the reading only."""
    try:
        started, cpu = time.perf_counter(), cpu_seconds()
        records = counted = 0
        async for page in source.read(stream, after=after):
            records += len(page)
            if items is not None:
                counted += sum(items(record) for record in page)
        return Read(records, time.perf_counter() - started, counted, cpu_seconds() - cpu)
    finally:
        await source.aclose()


def cpu_seconds(pid: int | None = None) -> float:
    """The CPU seconds (user + system) a process has used: this one (None), or another,
    such as a fake's server, read from ``/proc``."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pid(shop: RunningFake) -> int:
    """The process id of a fake started in its own process (``launch.start``)."""
    if not isinstance(shop.process, subprocess.Popen):
        raise TypeError("the fake runs in this process: start it with launch.start")
    return shop.process.pid


@dataclass(frozen=True)
class Run:
    """One read under the rate limit: what sets it apart (its columns in the table) and the
    connector it reads with (made in the read's event loop)."""

    columns: tuple[str, ...]
    connector: Callable[[], SourceConnector]


def paced_and_unpaced(args: argparse.Namespace,
                      connector: Callable[[int, float | None], SourceConnector]) -> list[Run]:
    """One read paced to the budget (``requests_per_second``) at each page size, then one
    unpaced at the first (429 + Retry-After), for the columns ``page size``, ``pacing``."""
    reads = [*((size, args.rate_limit) for size in args.page_size), (args.page_size[0], None)]
    return [Run((str(size), "paced" if pace else "none"), partial(connector, size, pace))
            for size, pace in reads]


class RunningFake(Protocol):
    """A fake shop started for the benchmark (each platform's ``launch.start`` gives one)."""

    process: subprocess.Popen[str] | Served

    def fake(self) -> httpx.Client: ...

    def stop(self) -> None: ...


F = TypeVar("F", bound=RunningFake)


def under_rate_limit(platform: str, start: Callable[..., F], args: argparse.Namespace,
                     columns: Sequence[str], runs: Callable[[F], Sequence[Run]]) -> None:
    """Start the platform's fake with ``args.orders`` orders (2000 customers, 200 products)
    behind a limit of ``args.rate_limit`` requests/s, do each of its ``runs`` with a full
    bucket, and print a row for each: records/s, the requests the fake answered (its
    ``/__fake__/stats`` counts them), the 429s among them and the share of the budget used."""
    logging.getLogger("shopsync.http").setLevel(logging.ERROR)  # the 429 retries are counted
    shop = start("--orders", str(args.orders), "--customers", "2000", "--products", "200",
                 "--rate-limit", str(args.rate_limit))
    try:
        fake = shop.fake()
        print(f"extract orders from a fake {platform} shop: {args.orders} orders, 2000"
              f" customers, budget {args.rate_limit:g} requests/s")
        print("  " + "".join(f"{name:>9}" for name in columns)
              + f"{'records':>9}{'seconds':>9}{'records/s':>11}{'requests':>10}{'429s':>6}"
              + f"{'budget used':>13}{'fake cpu s':>12}{'reader cpu s':>14}")
        for run in runs(shop):
            time.sleep(1.5)  # let the bucket fill up again between runs
            before, served = fake.get("/stats").json(), cpu_seconds(server_pid(shop))
            read = asyncio.run(_read(run.connector))
            after, served = fake.get("/stats").json(), cpu_seconds(server_pid(shop)) - served
            answered = after["requests"] - before["requests"]
            throttled = after["throttled"] - before["throttled"]
            share = (answered - throttled) / (read.seconds * args.rate_limit)
            print("  " + "".join(f"{value:>9}" for value in run.columns)
                  + f"{read.records:>9}{read.seconds:>9.1f}{read.per_second:>11.0f}"
                  + f"{answered:>10}{throttled:>6}{share:>12.0%}{served:>12.1f}{read.cpu:>14.1f}")
    finally:
        shop.stop()


async def _read(connector: Callable[[], SourceConnector]) -> Read:
    return await read_whole(connector())
