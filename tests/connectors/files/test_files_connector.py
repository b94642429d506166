"""The files connector on real drop folders: the three formats, time zones, malformed rows,
and files read once — a new file alone, a late file with an old mtime, a file touched or
rewritten, one still being written, the memory lost."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from connectors.sources.base import Position, SourceError
from connectors.sources.files import FilesConfig, FilesConnector, apart
from connectors.sources.files.memory import Arrived
from sandbox.shops.files.config import STREAMS, TIMEZONE
from sandbox.shops.files.drop import BROKEN_JSON, Drop, order_export, write_drop
from sandbox.shops.sql.data import generate

PARIS = ZoneInfo(TIMEZONE)


def connector(root: Path, streams: dict[str, Any] | None = None, **options: Any) -> FilesConnector:
    return FilesConnector(FilesConfig(path=root, streams=streams or STREAMS,
                                      **{"timezone": TIMEZONE, **options}))


def read(root: Path, stream: str, *, streams: dict[str, Any] | None = None,
         options: dict[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    source = connector(root, streams, **(options or {}))

    async def run() -> list[dict[str, Any]]:
        return [r async for page in source.read(stream, **kwargs) for r in page]

    return asyncio.run(run())


def last_position(records: list[dict[str, Any]]) -> Position:
    return Position(datetime.fromisoformat(records[-1]["_changed_at"]), records[-1]["_key"])


def set_mtime(path: Path, moment: datetime) -> None:
    os.utime(path, ns=(int(moment.timestamp() * 1e9),) * 2)


@pytest.fixture(scope="module")
def shop():
    return generate(4, orders=40, customers=10, products=9)


@pytest.fixture
def drop(tmp_path, shop) -> Drop:
    return write_drop(tmp_path, shop)


def test_every_stream_reads_every_row_once_in_position_order(tmp_path, drop):
    for stream in STREAMS:
        source = connector(tmp_path, page_size=7)
        records = asyncio.run(_all(source, stream))
        found = [source.position(stream, r) for r in records]
        assert sorted(p.record_id for p in found) == sorted(drop.ids[stream]), stream
        assert all(a < b for a, b in pairwise(found)), stream


def test_the_rows_of_one_file_share_one_change_time(tmp_path, drop):
    source = connector(tmp_path)
    records = asyncio.run(_all(source, "orders"))
    times = [source.position("orders", r).changed_at for r in records]
    assert len({id(t) for t in times}) == len({r["_changed_at"] for r in records})
    assert times == [datetime.fromisoformat(r["_changed_at"]) for r in records]


async def _all(source: FilesConnector, stream: str) -> list[dict[str, Any]]:
    return [r async for page in source.read(stream) for r in page]


def test_times_in_each_format_arrive_in_utc(tmp_path, drop, shop):
    local = shop.tables["customers"][0]["created_at"]
    expected = local.replace(tzinfo=PARIS).astimezone(UTC).isoformat()
    customers = {r["_key"]: r for r in read(tmp_path, "customers")}  # CSV: naive, shop-local
    orders = {r["_key"]: r for r in read(tmp_path, "orders")}  # JSON Lines: with offsets
    products = {r["_key"]: r for r in read(tmp_path, "products")}  # Parquet: UTC timestamps

    assert customers[str(shop.tables["customers"][0]["id"])]["created_at"] == expected
    order = shop.tables["orders"][0]
    assert orders[str(order["id"])]["created_at"] == order["created_at"].replace(
        tzinfo=PARIS).astimezone(UTC).isoformat()
    product = shop.tables["products"][0]
    assert products[str(product["id"])]["created_at"] == product["created_at"].replace(
        tzinfo=PARIS).astimezone(UTC).isoformat()
    assert products[str(product["id"])]["price"] == product["price"]  # a Decimal, as typed


def test_a_row_that_cannot_be_read_is_yielded_with_its_reasons_and_the_rest_is_read(tmp_path, drop):
    orders = read(tmp_path, "orders")
    customers = read(tmp_path, "customers")

    broken = [r for r in orders if r.get("_errors")]
    assert len(broken) == 1 and broken[0]["_errors"][0].startswith(
        f"{broken[0]['_origin']}: not JSON")
    assert len(orders) == 41
    errors = sorted(e for r in customers for e in r.get("_errors", []))
    assert errors == ["customers/customers-2.csv:7: no key (column 'id' is empty or missing)",
                      "customers/customers-2.csv:8: 13 fields where the header has 12"]


def test_a_file_missing_a_configured_column_quarantines_its_rows(tmp_path):
    (tmp_path / "carriers").mkdir()
    (tmp_path / "carriers" / "c.csv").write_text("id,title\n1,Post\n")
    records = read(tmp_path, "carriers")
    assert records[0]["_errors"] == [
        "carriers/c.csv:2: the file has no column 'name', 'active', 'created_at'"]


def test_files_are_read_once_then_a_new_file_alone(tmp_path, drop, shop):
    first = read(tmp_path, "orders")
    cursor = last_position(first)
    assert read(tmp_path, "orders", after=cursor) == []

    again = [{**o, "total": Decimal("99.99")} for o in order_export(shop)[:2]]
    drop.jsonl("orders", "orders-update-1.jsonl", again, mtime=datetime.now(UTC))
    news = read(tmp_path, "orders", after=cursor)

    assert [r["_key"] for r in news] == [str(o["id"]) for o in again]
    assert all(r["amount"] == 99.99 for r in news)


def test_a_late_file_with_an_old_mtime_is_still_read(tmp_path, drop, shop):
    cursor = last_position(read(tmp_path, "orders"))
    late = drop.jsonl("orders", "orders-2023-late.jsonl", order_export(shop)[5:7],
                      mtime=datetime(2023, 1, 1, tzinfo=UTC))  # unzipped with its old time

    news = read(tmp_path, "orders", after=cursor)

    assert len(news) == 2 and all(n["_origin"].startswith("orders/" + late.name) for n in news)
    assert last_position(news) > cursor


def test_a_touched_file_is_not_read_again_and_a_rewritten_one_is(tmp_path, drop):
    cursor = last_position(read(tmp_path, "vouchers"))
    path = tmp_path / "vouchers" / "coupons.jsonl"
    set_mtime(path, datetime.now(UTC) - timedelta(seconds=30))
    assert read(tmp_path, "vouchers", after=cursor) == []

    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "code": "CHANGED"})
    path.write_text("\n".join(lines) + "\n")
    again = read(tmp_path, "vouchers", after=cursor)
    assert len(again) == len(lines) and again[0]["code"] == "CHANGED"


def test_a_file_still_being_written_waits_until_it_has_settled(tmp_path, drop, shop):
    cursor = last_position(read(tmp_path, "orders"))
    drop.jsonl("orders", "orders-new.jsonl", order_export(shop)[:1], mtime=datetime.now(UTC))
    settled = datetime.now(UTC) - timedelta(seconds=2)  # the engine reads up to a settled second

    assert read(tmp_path, "orders", after=cursor, until=settled) == []
    assert len(read(tmp_path, "orders", after=cursor)) == 1


def test_reading_after_a_position_inside_a_file_resumes_at_the_next_key(tmp_path, drop):
    records = read(tmp_path, "orders", options={"page_size": 5})
    middle = Position(datetime.fromisoformat(records[10]["_changed_at"]), records[10]["_key"])
    rest = read(tmp_path, "orders", after=middle)
    assert [r["_key"] for r in rest] == [r["_key"] for r in records[11:]]


def test_the_last_row_of_a_key_in_a_file_wins(tmp_path):
    folder = tmp_path / "groups"
    folder.mkdir()
    (folder / "g.csv").write_text("id,name,created_at,updated_at\n2,Old,,\n1,One,,\n2,New,,\n")
    records = read(tmp_path, "groups")
    assert [(r["_key"], r["name"]) for r in records] == [("1", "One"), ("2", "New")]


def test_hidden_temporary_and_unmatched_files_are_ignored(tmp_path, drop):
    folder = tmp_path / "customers"
    for name in (".customers-3.csv", "customers-3.csv.part", "notes.txt", "other.csv"):
        (folder / name).write_text("id,email\n999,x@example.org\n")
    assert "999" not in {r["_key"] for r in read(tmp_path, "customers")}


def test_without_its_memory_a_reader_places_files_by_their_mtime(tmp_path, drop):
    cursor = last_position(read(tmp_path, "orders"))
    (tmp_path / ".shopsync" / "files-state.json").unlink()
    assert read(tmp_path, "orders", after=cursor) == []


def test_the_memory_can_live_elsewhere_and_a_missing_folder_is_named(tmp_path, drop):
    state = tmp_path.parent / f"{tmp_path.name}-state.json"
    read(tmp_path, "groups", options={"state_path": state})
    assert json.loads(state.read_text())["streams"]["groups"]["files"]["customer_groups.csv"]
    state.unlink()
    with pytest.raises(SourceError, match=r"connection\.streams\.orders\.folder: there is no"):
        asyncio.run(connector(tmp_path, {"orders": {**STREAMS["orders"], "folder": "nope"}}).check())
    with pytest.raises(SourceError, match=r"connection\.path: there is no folder"):
        asyncio.run(connector(tmp_path / "missing").check())


def test_the_broken_line_is_where_the_manifest_says(tmp_path, drop):
    origin = next(i for i in drop.ids["orders"] if ":" in i)
    name, line = origin.removeprefix("orders/").split(":")
    assert (tmp_path / "orders" / name).read_text().splitlines()[int(line) - 1] == BROKEN_JSON


def test_a_file_larger_than_memory_holds_reads_the_same_sorted_in_runs_on_disk(
        tmp_path, monkeypatch):
    """Rows out of key order, a key repeated across runs, and rows that cannot be read come
    out the same whether the file is sorted in memory or in runs on disk."""
    folder = tmp_path / "groups"
    folder.mkdir()
    rows = [f"{key},name {n},," for n, key in enumerate([9, 3, 12, 3, 1, 40, 9, 7, 2, 12, 5])]
    rows.insert(4, "")  # a blank line, and one of too many fields
    rows.insert(7, "8,a,b,c,d,e")
    (folder / "g.csv").write_text("id,name,created_at,updated_at\n" + "\n".join(rows) + "\n")
    in_memory = read(tmp_path, "groups", options={"page_size": 2})

    monkeypatch.setattr("connectors.sources.files.ordering.SPILL_ROWS", 3)
    in_runs = read(tmp_path, "groups", options={"page_size": 2})

    assert in_runs == in_memory
    keys = [r["_key"] for r in in_memory if "_errors" not in r]
    assert keys == ["1", "2", "3", "5", "7", "9", "12", "40"]
    assert {r["_key"]: r.get("name") for r in in_memory}["3"] == "name 3"  # its last row


def test_the_orders_of_a_drop_read_the_same_sorted_in_runs_on_disk(tmp_path, drop, monkeypatch):
    in_memory = read(tmp_path, "orders", options={"page_size": 7})
    monkeypatch.setattr("connectors.sources.files.ordering.SPILL_ROWS", 4)
    middle = Position(datetime.fromisoformat(in_memory[10]["_changed_at"]),
                      in_memory[10]["_key"])

    assert read(tmp_path, "orders", options={"page_size": 7}) == in_memory
    assert read(tmp_path, "orders", after=middle) == in_memory[11:]


def test_the_file_a_read_ended_in_is_not_read_again_while_its_size_and_mtime_hold(tmp_path):
    """The memory trusts a file's size and mtime (it hashes only files that changed them),
    and keeps the last key of a file read to its end: the next read from a position at
    that key does not open the file, so a same-size rewrite under the old mtime is not seen
    — where reading it again would have found key 9."""
    folder = tmp_path / "groups"
    folder.mkdir()
    path = folder / "g.csv"
    path.write_text("id,name,created_at,updated_at\n1,One,,\n2,Two,,\n")
    set_mtime(path, datetime.now(UTC) - timedelta(seconds=30))
    cursor = last_position(read(tmp_path, "groups"))
    memory = json.loads((tmp_path / ".shopsync" / "files-state.json").read_text())
    assert memory["streams"]["groups"]["files"]["g.csv"]["last_key"] == "2"

    stat = path.stat()
    path.write_text("id,name,created_at,updated_at\n1,One,,\n9,Two,,\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert read(tmp_path, "groups", after=cursor) == []
    # from before its last key, the file is read again (a run that stopped inside it)
    inside = Position(cursor.changed_at, "1")
    assert [r["_key"] for r in read(tmp_path, "groups", after=inside)] == ["9"]


def test_a_read_stopped_inside_a_file_leaves_its_last_key_unknown(tmp_path, drop):
    source = connector(tmp_path, page_size=3)

    async def first_page() -> list[dict[str, Any]]:
        pages = source.read("orders")
        page = await anext(pages)
        await pages.aclose()
        return page

    asyncio.run(first_page())
    memory = json.loads((tmp_path / ".shopsync" / "files-state.json").read_text())
    assert all(entry.get("last_key") is None
               for entry in memory["streams"]["orders"]["files"].values())


def test_a_file_parsed_by_a_process_of_its_own_reads_the_same(tmp_path, drop, monkeypatch):
    """``parse_apart_bytes: 0`` has every file parsed and put in key order by a process of
    its own (``apart.py``), this one only merging the runs it leaves: the same records, the
    broken line included, in runs on disk too, and from a position inside a file."""
    in_process = read(tmp_path, "orders", options={"page_size": 7, "parse_apart_bytes": None})

    def parsed_here(*_: Any) -> None:
        raise AssertionError("the file was parsed in the reading process")

    monkeypatch.setattr("connectors.sources.files.connector.file_rows", parsed_here)
    apart = {"page_size": 7, "parse_apart_bytes": 0}
    assert read(tmp_path, "orders", options=apart) == in_process
    assert any("_errors" in r for r in in_process)

    monkeypatch.setattr("connectors.sources.files.ordering.SPILL_ROWS", 4)
    middle = Position(datetime.fromisoformat(in_process[10]["_changed_at"]),
                      in_process[10]["_key"])
    assert read(tmp_path, "orders", options=apart) == in_process
    assert read(tmp_path, "orders", options=apart, after=middle) == in_process[11:]


def test_a_configuration_mistake_found_by_the_parsing_process_is_raised_as_in_process(
        tmp_path, drop):
    streams = {"orders": {**STREAMS["orders"], "templates": {"reference": "{id:%Y}"}}}
    messages = []
    for threshold in (None, 0):
        with pytest.raises(SourceError) as raised:
            read(tmp_path, "orders", streams=streams, options={"parse_apart_bytes": threshold})
        messages.append(str(raised.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("connection.streams.orders.templates.reference: '{id:%Y}'")


def test_a_parsing_process_that_fails_stops_the_read_with_its_last_words(tmp_path, drop):
    config = connector(tmp_path).config
    spec = config.streams["orders"]
    file = next(iter(config.folder("orders").glob("*.jsonl")))
    arrived = Arrived(file, file.name, datetime.now(UTC))

    with pytest.raises(SourceError) as raised:
        asyncio.run(apart.taken_apart("orders", spec, TIMEZONE, arrived,
                                      tmp_path / "no such folder", 4))
    message = str(raised.value)
    assert message.startswith(f"orders/{file.name}: the process parsing the file failed: ")
    assert "FileNotFoundError" in message and "Traceback" not in message


def test_a_parsing_process_starts_without_the_sql_connectors_libraries():
    """The child imports what parsing needs and no more: SQLAlchemy and httpx, which the
    SQL source's connector would bring, were half of its start."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, connectors.sources.files.apart; "
         "print(sorted(m for m in ('sqlalchemy', 'httpx') if m in sys.modules))"],
        capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_the_next_file_is_parsed_while_one_is_read_and_nothing_is_left_when_a_read_stops(
        tmp_path, drop, monkeypatch):
    """A read parsing files apart starts the next file's process as it hands over the first
    file's rows; stopped there, it ends that process and removes both files' runs."""
    runs_under = tmp_path / "tmp"
    runs_under.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs_under))
    assert len(list((tmp_path / "orders").glob("*.jsonl"))) >= 2
    source = connector(tmp_path, page_size=3, parse_apart_bytes=0)

    async def first_page() -> int:
        pages = source.read("orders")
        await anext(pages)
        folders = len(list(runs_under.iterdir()))
        await pages.aclose()
        return folders

    folders = asyncio.run(first_page())
    assert folders == 2  # the first file's runs, being merged; the next file's
    assert list(runs_under.iterdir()) == []
    assert parsing_processes() == []


def parsing_processes() -> list[int]:
    """This process's children that parse a file apart (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line.split()[1] for line in status.splitlines()
                      if line.startswith("PPid:"))
        if int(parent) == os.getpid() and b"connectors.sources.files.apart" in command \
                and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found
