"""The fake drop folder as written: each format the way an exporter writes it, the files'
modification times in the past and in writing order, the ids the connector must find, and
the ``shopsync fake-shop files`` command that holds the folder for the demo."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from sandbox.shops.files.drop import write_drop
from sandbox.shops.sql.data import generate


def test_each_format_holds_what_an_exporter_writes(tmp_path):
    drop = write_drop(tmp_path, generate(2, orders=30, customers=6, products=4))

    header, first = (tmp_path / "customers" / "customers-1.csv").read_text().splitlines()[:2]
    assert header.startswith("id,email,first_name,last_name")
    assert re.search(r",\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,", first)  # naive, shop-local
    order = json.loads((tmp_path / "orders" / "orders-2024.jsonl").read_text().splitlines()[0])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", order["updated_at"])
    assert set(order["customer"]) == {"id", "email", "since"} and order["items"]
    schema = pq.read_schema(tmp_path / "products" / "products.parquet")
    assert str(schema.field("updated_at").type) == "timestamp[us, tz=UTC]"
    assert str(schema.field("price").type).startswith("decimal128")
    assert len(drop.ids["orders"]) == 31 and len(drop.ids["customers"]) == 8


def test_files_are_dated_in_the_past_in_the_order_they_were_written(tmp_path):
    write_drop(tmp_path, generate(2, orders=30, customers=6, products=4))
    mtimes = sorted((p.stat().st_mtime_ns, p.relative_to(tmp_path).as_posix())
                    for p in tmp_path.rglob("*") if p.is_file())
    assert [name for _, name in mtimes][:2] == ["statuses/order_states.csv", "carriers/carriers.csv"]
    assert len({m for m, _ in mtimes}) == len(mtimes)


def test_the_command_prints_its_folder_and_removes_it_when_stopped():
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "fake-shop", "files", "--port", "0",
         "--orders", "5"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    banner = process.stdout.readline()
    match = re.search(r"files at (/\S+)", banner)
    assert match, banner
    root = Path(match.group(1))
    assert (root / "orders").is_dir() and (root / "products" / "products.parquet").is_file()
    process.terminate()
    assert process.wait(timeout=10) == 0
    assert not root.exists()
