"""The SQL connector on real SQLite and PostgreSQL databases: what a record holds, time
zones (naive shop-local columns, ``timestamptz``, the DST fall-back hour, a session zone
that is not UTC), keyset paging while rows change, full streams and their ids, the ways a
cursor can be stored, and the errors a configuration can provoke."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError
from sqlalchemy import Column, Integer, MetaData, Table, Text, create_engine

from connectors.sources.base import Position, SourceError, UnsupportedStream
from connectors.sources.sql import SqlConfig, SqlConnector
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import DST_FOLD

PARIS = ZoneInfo(TIMEZONE)


def read(connector: SqlConnector, stream: str, **kwargs: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        try:
            return [r async for page in connector.read(stream, **kwargs) for r in page]
        finally:
            await connector.aclose()

    return asyncio.run(run())


def utc(local: datetime) -> datetime:
    return local.replace(tzinfo=PARIS).astimezone(UTC)


def positions(connector: SqlConnector, stream: str, records: list[dict[str, Any]]) -> list[Position]:
    return [connector.position(stream, r) for r in records]


def ascending(found: list[Position]) -> bool:
    return all(a < b for a, b in pairwise(found))


def make_table(url: str, name: str, columns: list[Column[Any]], rows: list[dict[str, Any]]) -> None:
    engine = create_engine(url)
    try:
        table = Table(name, MetaData(), *columns)
        table.create(engine)
        with engine.begin() as conn:
            conn.execute(table.insert(), rows)
    finally:
        engine.dispose()


def test_an_order_carries_its_mapped_fields_nested_its_lines_and_utc_times(make_shop, connect):
    _, shop = make_shop()
    records = read(connect(page_size=7), "orders")

    order = shop.tables["orders"][0]
    first = next(r for r in records if r["_key"] == str(order["id"]))
    assert first["reference"] == order["number"]
    assert first["customer"]["email"] == order["email"]
    assert first["updated_at"] == utc(order["updated_at"]).isoformat()
    assert first["_changed_at"] == utc(order["updated_at"]).isoformat()
    lines = [i for i in shop.tables["order_items"] if i["order_id"] == order["id"]]
    assert [(line["product_id"], line["quantity"]) for line in first["products"]] == [
        (i["product_id"], i["qty"]) for i in lines]
    assert float(first["products"][0]["price"]) == float(lines[0]["unit_price"])
    assert sorted(r["_key"] for r in records) == sorted(str(i) for i in shop.ids("orders"))


def test_naive_and_zoned_columns_read_the_same_whatever_the_session_zone(make_shop, connect):
    """Customers' times are timestamptz on PostgreSQL, naive elsewhere; the test database's
    session zone is Asia/Kathmandu, the shop's Europe/Paris."""
    _, shop = make_shop()
    connector = connect()
    records = read(connector, "customers")

    expected = {str(c["id"]): utc(c["updated_at"]) for c in shop.tables["customers"]}
    assert {p.record_id: p.changed_at for p in positions(connector, "customers", records)} == expected
    created = {r["_key"]: r["created_at"] for r in records}
    assert created == {str(c["id"]): utc(c["created_at"]).isoformat()
                       for c in shop.tables["customers"]}


def test_the_dst_fall_back_hour_reads_in_local_order_and_resumes_inside_it(make_shop, connect):
    make_shop()
    connector = connect(page_size=5)
    found = positions(connector, "orders", read(connector, "orders"))
    in_fold = [p for p in found if p.record_id in ("1006", "1007")]

    # 02:20 and 02:50 local on 2024-10-27, the first (summer-time) pass of that hour
    assert [p.changed_at for p in in_fold] == [utc(DST_FOLD + timedelta(minutes=20)),
                                               utc(DST_FOLD + timedelta(minutes=50))]
    assert ascending(found)
    rest = positions(connector, "orders", read(connect(page_size=5), "orders", after=in_fold[0]))
    assert rest == [p for p in found if in_fold[0] < p]


def test_rows_changed_between_pages_are_read_at_their_new_place_once(make_shop, connect):
    database, shop = make_shop()
    connector = connect(page_size=10)

    async def scenario() -> list[dict[str, Any]]:
        pages = connector.read("orders")
        first = await anext(pages)
        read_already, not_yet = first[0]["_key"], str(shop.ids("orders")[-1])
        # one already read, one not yet: both move to the end
        await asyncio.to_thread(database.change, "orders", int(read_already), total=1.5)
        await asyncio.to_thread(database.change, "orders", int(not_yet), total=2.5)
        rest = [r async for page in pages for r in page]
        await connector.aclose()
        return first + rest

    records = asyncio.run(scenario())
    keys = [r["_key"] for r in records]
    assert sorted(set(keys)) == sorted(str(i) for i in shop.ids("orders"))
    assert keys.count(str(shop.ids("orders")[-1])) == 1
    assert keys.count(records[0]["_key"]) == 2  # read before the change, and after it
    assert float(records[-1]["amount"]) in (1.5, 2.5)
    assert ascending(positions(connector, "orders", records[len(records) - 2:]))


def test_a_read_stops_at_until(make_shop, connect):
    make_shop()
    connector = connect(page_size=4)
    everything = positions(connector, "orders", read(connector, "orders"))
    until = everything[20].changed_at

    upto = positions(connector, "orders", read(connect(page_size=4), "orders", until=until))

    assert upto == [p for p in everything if p.changed_at <= until]


def test_a_read_by_key_takes_the_rows_changed_in_its_span_in_key_order_and_resumes(
    make_shop, connect
):
    make_shop()
    connector = connect(page_size=4)
    everything = positions(connector, "orders", read(connector, "orders"))
    times = sorted(p.changed_at for p in everything)
    since, until = times[10], times[-10]
    spanned = sorted((p for p in everything if since <= p.changed_at <= until),
                     key=lambda p: int(p.record_id))

    def by_key(after_key: str | None) -> list[Position]:
        keyed = connect(page_size=4)
        assert keyed.reads_by_key("orders")

        async def run() -> list[dict[str, Any]]:
            try:
                return [r async for page in keyed.read_by_key(
                    "orders", after_key=after_key, since=since, until=until) for r in page]
            finally:
                await keyed.aclose()

        return positions(keyed, "orders", asyncio.run(run()))

    assert by_key(None) == spanned
    assert by_key(spanned[6].record_id) == spanned[7:]


def test_a_stream_without_cursor_is_read_whole_in_key_order_and_lists_its_ids(make_shop, connect):
    _, shop = make_shop()
    spec = {**STREAMS["customers"], "cursor": None}
    connector = connect({"customers": spec}, page_size=5)

    assert connector.streams()["customers"].incremental is False
    records = read(connector, "customers")
    found = positions(connector, "customers", records)
    assert [p.record_id for p in found] == [str(i) for i in sorted(shop.ids("customers"))]
    assert {p.changed_at for p in found} == {datetime(1970, 1, 1, tzinfo=UTC)}

    async def ids() -> list[str]:
        try:
            return [i async for page in connector.ids("customers") for i in page]
        finally:
            await connector.aclose()

    assert asyncio.run(ids()) == [str(i) for i in sorted(shop.ids("customers"))]


def test_text_keys_tie_break_in_the_order_positions_compare(make_shop, connect, db_url):
    database, _ = make_shop()
    same = datetime(2023, 5, 1, 12, 0)
    database.insert("order_states", [{"code": code, "label": code, "paid": False,
                                      "updated_at": same} for code in ("Zed", "alpha", "Beta", "b")])
    connector = connect(page_size=2)
    found = positions(connector, "statuses", read(connector, "statuses"))

    assert ascending(found)
    assert len(found) == 10


def test_lines_in_a_json_column_and_a_broken_one_passed_on_as_it_is(db_url, connect):
    make_table(db_url, "baskets", [Column("id", Integer), Column("changed", Text),
                                   Column("lines", Text)], [
        {"id": 1, "changed": "2025-01-01 10:00:00", "lines": '[{"sku": 7, "n": 2}]'},
        {"id": 2, "changed": "2025-01-01 10:00:00", "lines": '[{"sku": 7, '},
        {"id": 3, "changed": "2025-01-01 11:00:00", "lines": None},
    ])
    spec = {"table": "baskets", "key": "id", "cursor": "changed", "columns": {"cart_id": "id"},
            "lines": {"column": "lines", "columns": {"product_id": "sku", "quantity": "n"}}}
    connector = connect({"carts": spec})

    records = read(connector, "carts")

    assert [r["products"] for r in records] == [[{"product_id": 7, "quantity": 2}],
                                                '[{"sku": 7, ', []]


def test_a_unix_time_cursor(db_url, connect):
    moments = [datetime(2025, 3, 1, 8, 0, s, tzinfo=UTC) for s in (0, 0, 1, 2)]
    make_table(db_url, "events", [Column("id", Integer), Column("at", Integer)],
               [{"id": i + 1, "at": int(m.timestamp())} for i, m in enumerate(moments)])
    spec = {"table": "events", "key": "id", "cursor": "at", "cursor_format": "epoch",
            "columns": {"cart_id": "id"}}
    connector = connect({"carts": spec}, page_size=1)

    found = positions(connector, "carts", read(connector, "carts"))
    rest = positions(connector, "carts", read(connect({"carts": spec}), "carts", after=found[0]))

    assert [p.changed_at for p in found] == moments
    assert [p.record_id for p in rest] == ["2", "3", "4"]


def test_sqlite_text_times_in_different_formats_compare_as_times(tmp_path):
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    make_table(url, "t", [Column("id", Integer), Column("changed", Text)], [
        {"id": 1, "changed": "2025-01-01 10:00:00.000000"},  # SQLAlchemy's way
        {"id": 2, "changed": "2025-01-01 10:00:00"},  # datetime('now')'s way
        {"id": 3, "changed": "2025-01-01T09:59:59.500"},
        {"id": 4, "changed": "2025-01-01 10:00:01"},
    ])
    spec = {"table": "t", "key": "id", "cursor": "changed", "columns": {"cart_id": "id"}}
    connector = SqlConnector(SqlConfig(url=url, timezone="UTC", page_size=1,
                                       streams={"carts": spec}))

    found = positions(connector, "carts", read(connector, "carts"))

    assert [p.record_id for p in found] == ["3", "1", "2", "4"]
    assert found[1].changed_at == found[2].changed_at == datetime(2025, 1, 1, 10, tzinfo=UTC)


def test_configuration_mistakes_name_the_field_to_fix(make_shop, connect, db_url):
    make_shop()
    wrong_column = {**STREAMS["products"], "columns": {"product_id": "id", "price": "cost"}}
    with pytest.raises(SourceError, match=r"connection\.streams\.products\.columns\.price: no"
                                          r" column 'cost' .* the rows of products have: id, sku"):
        read(connect({"products": wrong_column}), "products")
    with pytest.raises(SourceError, match=r"connection\.streams\.products\.table: "):
        asyncio.run(connect({"products": {**STREAMS["products"], "table": "nope"}}).check())
    with pytest.raises(UnsupportedStream, match="no stream 'orders' is configured"):
        connect({"products": STREAMS["products"]}).read("orders")


def test_a_missing_sqlite_file_is_not_created(tmp_path):
    missing = tmp_path / "typo.db"
    connector = SqlConnector(SqlConfig(url=f"sqlite:///{missing}", streams=STREAMS))
    with pytest.raises(SourceError, match="there is no SQLite database at"):
        asyncio.run(connector.check())
    assert not missing.exists()


def test_the_database_is_opened_read_only(make_shop, connect):
    make_shop()
    connector = connect()
    with (pytest.raises(Exception, match="read-only transaction|readonly database"),
          connector.engine().begin() as conn):
        conn.exec_driver_sql("DELETE FROM order_items")
    asyncio.run(connector.aclose())
    assert len(read(connect(), "orders")) == 60


def test_the_url_never_shows_and_remote_postgresql_needs_tls():
    config = SqlConfig(url="postgresql+psycopg://shop:s3cret@db.example/shop?sslmode=require")
    assert "s3cret" not in repr(config) and "s3cret" not in repr(SqlConnector(config))
    with pytest.raises(ValidationError, match="must be reached over TLS") as caught:
        SqlConfig(url="postgresql+psycopg://shop:s3cret@db.example/shop")
    assert "s3cret" not in str(caught.value)
    SqlConfig(url="postgresql+psycopg://shop:s3cret@db.example/shop", allow_unencrypted=True)
    SqlConfig(url="postgresql+psycopg://shop:s3cret@127.0.0.1:5432/shop")
    SqlConfig(url="postgresql+psycopg://shop@/shop?host=/run/postgresql")


def test_a_refused_connection_does_not_echo_the_password():
    connector = SqlConnector(SqlConfig(
        url="postgresql+psycopg://shop:s3cret@127.0.0.1:9/shop?connect_timeout=2"))
    with pytest.raises(SourceError) as caught:
        asyncio.run(connector.check())
    assert "s3cret" not in str(caught.value)
    assert caught.value.__cause__ is None
