"""``shopsync fake-shop files``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from sandbox.shops.cli import generated_options


@click.command("files")
@generated_options("The shop's time zone: naive times in the CSV files are local to it.")
@click.option("--folder", default=None, type=click.Path(file_okay=False),
              help="Write into this folder instead of a new temporary one (kept at exit).")
@click.option("--keep", is_flag=True, help="Keep the temporary folder at exit.")
def command(seed: int, orders: int, customers: int, products: int, timezone: str,
            folder: str | None, keep: bool, port: int) -> None:
    """Write a fake drop folder (CSV, JSON Lines and Parquet exports of a generated shop),
    print its path, keep it until stopped, then remove it. Read it with platform `files`
    (see sandbox/shops/files/config.py)."""
    from sandbox.shops.files.drop import write_drop
    from sandbox.shops.sql.data import generate
    from sandbox.shops.sql.serve import hold, remover

    root = Path(folder).resolve() if folder else Path(tempfile.mkdtemp(prefix="shopsync-fake-files-"))
    try:
        write_drop(root, generate(seed, orders=orders, customers=customers, products=products),
                   timezone=timezone)
    except Exception:
        if folder is None:
            remover(root, False)()
        raise
    hold(f"shopsync fake-shop files at {root} (csv, jsonl, parquet; {orders} orders,"
         f" {customers} customers, {products} products; naive times in {timezone})",
         remover(root, keep or folder is not None))
