"""Extraction speed of the SQL and files connectors from their fakes.

Writes the generated shop with N orders (default 20 000; 5 000 customers, 500 products) into
a SQLite file — and into PostgreSQL when ``--postgres URL`` is given (or
``SHOPSYNC_TEST_POSTGRES_URL`` is set), in a schema of its own, dropped afterwards — and as a
drop folder, then reads the ``orders`` stream whole (with its lines) at each page size.

A database has no request budget like an API's rate limit; what an extraction takes from it
is one connection, used one query at a time. So the "budget" here is that connection, and
the share used is the time spent inside the database calls ÷ the wall time (the rest is
Python building records). Files have no budget at all: the figure is disk and parsing.

    python bench/extract_sql.py [--orders 20000] [--page-size 500 2000] [--postgres URL]
"""

from __future__ import annotations

import asyncio
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from connectors.sources.files import FilesConfig, FilesConnector
from connectors.sources.sql import SqlConfig, SqlConnector
from sandbox.shops.files.config import STREAMS as FILE_STREAMS
from sandbox.shops.files.drop import write_drop
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import Shop, generate
from sandbox.shops.sql.db import FakeDatabase

try:
    from bench._extract import Read, parser, read_whole
except ModuleNotFoundError:  # run as a script: bench/ itself is on sys.path
    from _extract import Read, parser, read_whole  # type: ignore[no-redef]


class CountingSqlConnector(SqlConnector):
    """Counts the queries and the time spent in them."""

    queries = 0
    in_database = 0.0

    def _run(self, where: str, sql: Any, params: dict[str, Any]) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return super()._run(where, sql, params)
        finally:
            self.queries += 1
            self.in_database += time.perf_counter() - started


async def read_sql(url: str, page_size: int) -> tuple[Read, int, float]:
    """One read of orders (its items: their lines), the queries and the seconds in them."""
    source = CountingSqlConnector(SqlConfig.model_validate(
        {"url": url, "timezone": TIMEZONE, "page_size": page_size,
         "streams": {"orders": STREAMS["orders"]}}))
    read = await read_whole(source, items=lambda order: len(order["products"]))
    return read, source.queries, source.in_database


async def read_files(root: Path, page_size: int) -> Read:
    state = root.parent / f"state-{page_size}.json"  # a fresh memory: every file is new
    return await read_whole(FilesConnector(FilesConfig.model_validate(
        {"path": root, "timezone": TIMEZONE, "page_size": page_size, "state_path": state,
         "streams": {"orders": FILE_STREAMS["orders"]}})))


def bench_database(name: str, url: str, shop: Shop, page_sizes: list[int]) -> None:
    started = time.perf_counter()
    FakeDatabase(url, TIMEZONE).write(shop)
    print(f"  {name}: written in {time.perf_counter() - started:.1f}s")
    for page_size in page_sizes:
        read, queries, busy = asyncio.run(read_sql(url, page_size))
        print(f"  {name:<11}{page_size:>10}{read.records:>9}{read.items:>8}{read.seconds:>9.2f}"
              f"{read.per_second:>11.0f}{queries:>9}{busy / read.seconds:>13.0%}")


def main() -> None:
    options = parser(__doc__, page_sizes=[500, 2000])
    options.add_argument("--postgres", default=os.environ.get("SHOPSYNC_TEST_POSTGRES_URL"),
                         help="a PostgreSQL URL to bench too (a schema is made and dropped)")
    args = options.parse_args()
    shop = generate(0, orders=args.orders, customers=5000, products=500)
    print(f"extract orders (with their lines) from the fake shop: {args.orders} orders")
    print(f"  {'database':<11}{'page size':>10}{'records':>9}{'lines':>8}{'seconds':>9}"
          f"{'records/s':>11}{'queries':>9}{'budget used':>13}")
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-sql-") as tmp:
        bench_database("sqlite", f"sqlite:///{Path(tmp) / 'shop.db'}", shop, args.page_size)
        if args.postgres:
            admin = create_engine(args.postgres, isolation_level="AUTOCOMMIT")
            schema = f"bench_{secrets.token_hex(4)}"
            with admin.connect() as conn:
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            try:
                url = make_url(args.postgres).update_query_dict(
                    {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
                bench_database("postgresql", url, shop, args.page_size)
            finally:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
        root = Path(tmp) / "drop"
        write_drop(root, shop, streams=["orders"])
        print(f"  files ({len(list((root / 'orders').iterdir()))} JSON Lines files, no budget):")
        for page_size in args.page_size:
            read = asyncio.run(read_files(root, page_size))
            print(f"  {'files':<11}{page_size:>10}{read.records:>9}{'':>8}{read.seconds:>9.2f}"
                  f"{read.per_second:>11.0f}{'':>9}{'n/a':>13}")


if __name__ == "__main__":
    main()
