"""The fake shop database as written: what the SQL source meets in it (shop-local naive text
times in SQLite, ``timestamptz`` beside naive columns in PostgreSQL, ties, the DST fold), and
the ``shopsync fake-shop sql`` command that holds it for the demo."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import create_engine, text

from connectors.sources.sql import SqlConfig
from connectors.sources.sql.query import page_sql, plan_for, probe_sql
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import BULK, DST_FOLD, generate
from sandbox.shops.sql.db import FakeDatabase


def test_the_same_seed_makes_the_same_shop_and_bulk_edits_make_ties():
    one, two = generate(9, orders=300), generate(9, orders=300)
    assert one.tables == two.tables
    assert generate(10, orders=300).tables != one.tables
    at, _ = BULK["orders"]
    tied = [o for o in one.tables["orders"] if o["updated_at"] == at]
    assert len(tied) > 20, "a tie wider than a page"
    assert [o["updated_at"] for o in one.tables["orders"][5:7]] == [
        datetime(2024, 10, 27, 2, 20), datetime(2024, 10, 27, 2, 50)]
    assert DST_FOLD.hour == 2


def test_times_are_stored_as_an_in_house_database_keeps_them(make_shop, db_url):
    make_shop()
    engine = create_engine(db_url)
    with engine.connect() as conn:
        if db_url.startswith("sqlite"):
            kinds = conn.execute(text(
                "SELECT typeof(updated_at), updated_at FROM orders LIMIT 1")).one()
            assert kinds[0] == "text" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", kinds[1])
        else:
            types = dict(conn.execute(text(
                "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
                " WHERE column_name = 'updated_at' AND table_schema = current_schema()")).all())
            assert types["customers.updated_at"] == "timestamp with time zone"
            assert types["orders.updated_at"] == "timestamp without time zone"
        assert conn.execute(text("SELECT count(*) FROM order_items")).scalar() > 60
    engine.dispose()


def test_the_command_prints_its_url_keeps_the_database_and_removes_it_when_stopped():
    process = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "fake-shop", "sql", "--port", "0", "--orders",
         "5"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    banner = process.stdout.readline()
    match = re.search(r"at (sqlite:///(\S+))", banner)
    assert match, banner
    path = Path(match.group(2))
    assert path.is_file()
    process.terminate()
    assert process.wait(timeout=10) == 0
    assert not path.exists() and not path.parent.exists()


def test_every_page_of_the_sqlite_fake_is_a_range_scan_of_an_index(tmp_path):
    """The connector compares SQLite text times through ``strftime``: the fake indexes that
    expression with the key, so that a page costs the same in a shop of any size (without
    it each page scanned and sorted the whole table)."""
    url = f"sqlite:///{tmp_path / 'shop.db'}"
    FakeDatabase(url, TIMEZONE).write(generate(3, orders=60, customers=12, products=8))
    engine = create_engine(url)
    read_by_change = 0
    with engine.connect() as conn:
        for stream, spec in SqlConfig(url=url, streams=STREAMS, timezone=TIMEZONE).streams.items():
            probe = conn.execute(probe_sql(engine.dialect, spec)).mappings().first()
            plan = plan_for(engine.dialect, stream, spec, dict(probe or {}), ZoneInfo(TIMEZONE))
            if plan.cursor is None or spec.query:
                continue
            read_by_change += 1
            page = page_sql(plan, after=True, tie=True, until=True)
            steps = [row[-1] for row in conn.execute(text(f"EXPLAIN QUERY PLAN {page}"), {
                "t": "2024-01-01 00:00:00.000", "k": 1, "until": "2030-01-01 00:00:00.000",
                "limit": 100})]
            assert not any(s.startswith("SCAN") or "TEMP B-TREE" in s for s in steps), (
                stream, steps)
    assert read_by_change > 5
