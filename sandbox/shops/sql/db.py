"""The generated shop written into a real database (SQLite or PostgreSQL), and the few
writes tests make to it between reads.

The schema is an in-house shop's, not the API's: ``order_states`` keyed by a code, money in
NUMERIC, flags as booleans, ``order_items`` beside ``orders``. Times are shop-local and
naive — SQLite keeps them as text ``YYYY-MM-DD HH:MM:SS`` the way ``datetime('now')``
writes it — except PostgreSQL's ``customers`` times, which are ``timestamptz``: both kinds
must read the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    Numeric,
    Table,
    Text,
    create_engine,
    update,
)

from sandbox.shops.sql.data import Row, Shop

metadata = MetaData()
_TIME = DateTime().with_variant(Text(), "sqlite")
_ZONED_TIME = DateTime(timezone=True).with_variant(Text(), "sqlite")
_MONEY = Numeric(10, 2).with_variant(Float(), "sqlite")
_DATE = Date().with_variant(Text(), "sqlite")


#: SQLite keeps times as text, which a SQL source reads through this expression
#: (``connectors/sources/sql/query.py``): indexed with the key, as its README advises, each
#: page of a stream is a range scan, not a scan and sort of the whole table
SQLITE_CURSOR = "strftime('%Y-%m-%d %H:%M:%f', updated_at)"
#: table -> its key, for the tables read by change time
CHANGED: dict[str, str] = {}


def _table(name: str, *columns: Column[Any], changed: bool = True) -> Table:
    table = Table(name, metadata, *columns)
    if changed:
        Index(f"ix_{name}_changed", table.c.updated_at, table.c[columns[0].name])
        CHANGED[name] = columns[0].name
    return table


TABLES: dict[str, Table] = {t.name: t for t in (
    _table("order_states", Column("code", Text, primary_key=True), Column("label", Text),
           Column("paid", Boolean), Column("updated_at", _TIME)),
    _table("carriers", Column("id", Integer, primary_key=True), Column("name", Text),
           Column("active", Boolean), Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("customer_groups", Column("id", Integer, primary_key=True), Column("name", Text),
           Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("categories", Column("id", Integer, primary_key=True), Column("parent_id", Integer),
           Column("name", Text), Column("description", Text), Column("slug", Text),
           Column("active", Boolean), Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("brands", Column("id", Integer, primary_key=True), Column("name", Text),
           Column("active", Boolean), Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("customers", Column("id", Integer, primary_key=True), Column("email", Text),
           Column("first_name", Text), Column("last_name", Text), Column("phone", Text),
           Column("newsletter", Boolean), Column("opt_in", Boolean), Column("active", Boolean),
           Column("group_id", Integer), Column("birth_date", _DATE),
           Column("created_at", _ZONED_TIME), Column("updated_at", _ZONED_TIME)),
    _table("addresses", Column("id", Integer, primary_key=True), Column("customer_id", Integer),
           Column("first_name", Text), Column("last_name", Text), Column("street", Text),
           Column("street2", Text), Column("zip", Text), Column("city", Text),
           Column("country", Text), Column("phone", Text), Column("company", Text),
           Column("updated_at", _TIME)),
    _table("products", Column("id", Integer, primary_key=True), Column("sku", Text),
           Column("name", Text), Column("description", Text), Column("price", _MONEY),
           Column("sale_price", _MONEY), Column("stock", Integer), Column("active", Boolean),
           Column("category_id", Integer), Column("brand_id", Integer), Column("slug", Text),
           Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("variants", Column("id", Integer, primary_key=True), Column("product_id", Integer),
           Column("sku", Text), Column("name", Text), Column("price", _MONEY),
           Column("stock", Integer), Column("is_default", Boolean), Column("updated_at", _TIME)),
    _table("product_images", Column("id", Integer, primary_key=True),
           Column("product_id", Integer), Column("is_cover", Boolean), Column("url", Text),
           Column("updated_at", _TIME)),
    _table("coupons", Column("id", Integer, primary_key=True), Column("code", Text),
           Column("kind", Text), Column("value", _MONEY), Column("min_amount", _MONEY),
           Column("starts_at", _TIME), Column("ends_at", _TIME), Column("active", Boolean),
           Column("times_used", Integer), Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("carts", Column("id", Integer, primary_key=True), Column("customer_id", Integer),
           Column("email", Text), Column("currency", Text), Column("total", _MONEY),
           Column("converted", Boolean), Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("cart_items", Column("id", Integer, primary_key=True), Column("cart_id", Integer),
           Column("product_id", Integer), Column("variant_id", Integer), Column("qty", Integer),
           Column("unit_price", _MONEY), Column("unit_price_excl", _MONEY), changed=False),
    _table("orders", Column("id", Integer, primary_key=True), Column("number", Text),
           Column("state", Text), Column("customer_id", Integer), Column("email", Text),
           Column("cart_id", Integer), Column("currency", Text), Column("total", _MONEY),
           Column("total_tax", _MONEY), Column("shipping", _MONEY), Column("shipping_tax", _MONEY),
           Column("carrier_id", Integer), Column("coupon_code", Text), Column("discount", _MONEY),
           Column("created_at", _TIME), Column("updated_at", _TIME)),
    _table("order_items", Column("id", Integer, primary_key=True), Column("order_id", Integer),
           Column("product_id", Integer), Column("variant_id", Integer), Column("qty", Integer),
           Column("unit_price", _MONEY), Column("unit_price_excl", _MONEY), changed=False),
)}
Index("ix_order_items_order", TABLES["order_items"].c.order_id)
Index("ix_cart_items_cart", TABLES["cart_items"].c.cart_id)
ZONED = {("customers", "created_at"), ("customers", "updated_at")}


def local_text(moment: datetime) -> str:
    """How SQLite's ``datetime()`` writes a time: ``YYYY-MM-DD HH:MM:SS``."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


@dataclass
class FakeDatabase:
    """The shop's database: where it is, and the writes tests make between reads."""

    url: str
    timezone: str = "Europe/Paris"

    def engine(self) -> Engine:
        return create_engine(self.url)

    def value(self, table: str, column: str, value: Any, dialect: str) -> Any:
        """A generated value as this database stores it."""
        if dialect == "sqlite":
            if isinstance(value, datetime):
                return local_text(value)
            if isinstance(value, date):
                return value.isoformat()
            if isinstance(value, Decimal):
                return float(value)
        elif isinstance(value, datetime) and (table, column) in ZONED:
            return value.replace(tzinfo=ZoneInfo(self.timezone))
        return value

    def _rows(self, table: str, rows: list[Row], dialect: str) -> list[Row]:
        return [{c: self.value(table, c, v, dialect) for c, v in row.items()} for row in rows]

    def write(self, shop: Shop) -> None:
        """Create the tables and fill them with the shop."""
        engine = self.engine()
        try:
            with engine.begin() as conn:  # one transaction: one sync to disk, not one per table
                if engine.dialect.name == "sqlite":
                    conn.exec_driver_sql("PRAGMA synchronous = OFF")
                metadata.create_all(conn)
                for name, table in TABLES.items():
                    rows = shop.tables.get(name) or []
                    if rows:
                        conn.execute(table.insert(), self._rows(name, rows, engine.dialect.name))
                if engine.dialect.name == "sqlite":
                    for name, key in CHANGED.items():
                        conn.exec_driver_sql(f"CREATE INDEX ix_{name}_cursor"
                                             f" ON {name} ({SQLITE_CURSOR}, {key})")
        finally:
            engine.dispose()

    def now(self, seconds_ago: float = 5.0) -> datetime:
        """Shop-local wall-clock time, naive, ``seconds_ago`` in the past."""
        moment = datetime.now(UTC) - timedelta(seconds=seconds_ago)
        return moment.astimezone(ZoneInfo(self.timezone)).replace(tzinfo=None, microsecond=0)

    def change(self, table: str, key: Any, *, at: datetime | None = None, **values: Any) -> None:
        """Update one row (``values``) and its ``updated_at`` (``at``, default a few seconds
        ago: what the engine reads has settled)."""
        engine = self.engine()
        try:
            target = TABLES[table]
            key_column = next(iter(target.primary_key.columns))
            values["updated_at"] = at or self.now()
            with engine.begin() as conn:
                dialect = engine.dialect.name
                conn.execute(update(target).where(key_column == key).values(
                    {c: self.value(table, c, v, dialect) for c, v in values.items()}))
        finally:
            engine.dispose()

    def insert(self, table: str, rows: list[Row]) -> None:
        engine = self.engine()
        try:
            with engine.begin() as conn:
                conn.execute(TABLES[table].insert(), self._rows(table, rows, engine.dialect.name))
        finally:
            engine.dispose()
