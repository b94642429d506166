"""``shopsync fake-shop sql``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from sandbox.shops.cli import generated_options


@click.command("sql")
@generated_options("The shop's time zone: its naive times are local to it.")
@click.option("--url", default=None, metavar="URL",
              help="Write into this (empty) SQLAlchemy database instead of a new SQLite file;"
                   " it is left as it is at exit.")
@click.option("--keep", is_flag=True, help="Keep the SQLite file at exit.")
def command(seed: int, orders: int, customers: int, products: int, timezone: str,
            url: str | None, keep: bool, port: int) -> None:
    """Write a fake in-house shop database (SQLite by default), print its URL, keep it until
    stopped, then remove it. Read it with platform `sql` (see sandbox/shops/sql/config.py)."""
    from sandbox.shops.sql.data import generate
    from sandbox.shops.sql.db import FakeDatabase
    from sandbox.shops.sql.serve import hold, remover

    folder = Path(tempfile.mkdtemp(prefix="shopsync-fake-sql-"))
    target = url or f"sqlite:///{folder / 'shop.db'}"
    try:
        FakeDatabase(target, timezone).write(
            generate(seed, orders=orders, customers=customers, products=products))
    except Exception:
        remover(folder, False)()
        raise
    where = target if url is None else "the given URL"
    hold(f"shopsync fake-shop sql at {where} ({orders} orders, {customers} customers,"
         f" {products} products; naive times in {timezone})", remover(folder, keep))
