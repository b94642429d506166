"""The generated shop written into a real database (SQLite or PostgreSQL), and the few
writes tests make to it between reads.

The schema is an in-house shop's, not the API's: ``order_states`` keyed by a code, money in
NUMERIC, flags as booleans, ``order_items`` beside ``orders``. Times are shop-local and
naive — SQLite keeps them as text ``YYYY-MM-DD HH:MM:SS`` the way ``datetime('now')``
writes it — except PostgreSQL's ``customers`` times, which are ``timestamptz``: both kinds
must read the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Date,
    DateTime,
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


def _table(name: str, /, *, changed: bool = True, **columns: Any) -> Table:
    """A table of ``columns`` (name: type) keyed by the first; with ``changed``, indexed
    by its change time (``updated_at``) and key, and listed in ``CHANGED``."""
    key = next(iter(columns))
    table = Table(name, metadata, *(Column(column, kind, primary_key=column == key)
                                    for column, kind in columns.items()))
    if changed:
        Index(f"ix_{name}_changed", table.c.updated_at, table.c[key])
        CHANGED[name] = key
    return table


#: when a row was made and last changed, as most tables keep them
_STAMPS: dict[str, Any] = {"created_at": _TIME, "updated_at": _TIME}
TABLES: dict[str, Table] = {t.name: t for t in (
    _table("order_states", code=Text, label=Text, paid=Boolean, updated_at=_TIME),
    _table("carriers", id=Integer, name=Text, active=Boolean, **_STAMPS),
    _table("customer_groups", id=Integer, name=Text, **_STAMPS),
    _table("categories", id=Integer, parent_id=Integer, name=Text, description=Text, slug=Text,
           active=Boolean, **_STAMPS),
    _table("brands", id=Integer, name=Text, active=Boolean, **_STAMPS),
    _table("customers", id=Integer, email=Text, first_name=Text, last_name=Text, phone=Text,
           newsletter=Boolean, opt_in=Boolean, active=Boolean, group_id=Integer,
           birth_date=_DATE, created_at=_ZONED_TIME, updated_at=_ZONED_TIME),
    _table("addresses", id=Integer, customer_id=Integer, first_name=Text, last_name=Text,
           street=Text, street2=Text, zip=Text, city=Text, country=Text, phone=Text,
           company=Text, updated_at=_TIME),
    _table("products", id=Integer, sku=Text, name=Text, description=Text, price=_MONEY,
           sale_price=_MONEY, stock=Integer, active=Boolean, category_id=Integer,
           brand_id=Integer, slug=Text, **_STAMPS),
    _table("variants", id=Integer, product_id=Integer, sku=Text, name=Text, price=_MONEY,
           stock=Integer, is_default=Boolean, updated_at=_TIME),
    _table("product_images", id=Integer, product_id=Integer, is_cover=Boolean, url=Text,
           updated_at=_TIME),
    _table("coupons", id=Integer, code=Text, kind=Text, value=_MONEY, min_amount=_MONEY,
           starts_at=_TIME, ends_at=_TIME, active=Boolean, times_used=Integer, **_STAMPS),
    _table("carts", id=Integer, customer_id=Integer, email=Text, currency=Text, total=_MONEY,
           converted=Boolean, **_STAMPS),
    _table("cart_items", id=Integer, cart_id=Integer, product_id=Integer, variant_id=Integer,
           qty=Integer, unit_price=_MONEY, unit_price_excl=_MONEY, changed=False),
    _table("orders", id=Integer, number=Text, state=Text, customer_id=Integer, email=Text,
           cart_id=Integer, currency=Text, total=_MONEY, total_tax=_MONEY, shipping=_MONEY,
           shipping_tax=_MONEY, carrier_id=Integer, coupon_code=Text, discount=_MONEY,
           **_STAMPS),
    _table("order_items", id=Integer, order_id=Integer, product_id=Integer, variant_id=Integer,
           qty=Integer, unit_price=_MONEY, unit_price_excl=_MONEY, changed=False),
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

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """One transaction on an engine of its own, disposed of after it (a test writes
        between the reads of a source that has its own engine)."""
        engine = create_engine(self.url)
        try:
            with engine.begin() as conn:
                yield conn
        finally:
            engine.dispose()

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
        with self.begin() as conn:  # one transaction: one sync to disk, not one per table
            sqlite = conn.dialect.name == "sqlite"
            if sqlite:
                conn.exec_driver_sql("PRAGMA synchronous = OFF")
            metadata.create_all(conn)
            for name, table in TABLES.items():
                rows = shop.tables.get(name) or []
                if rows:
                    conn.execute(table.insert(), self._rows(name, rows, conn.dialect.name))
            for name, key in CHANGED.items() if sqlite else ():
                conn.exec_driver_sql(f"CREATE INDEX ix_{name}_cursor"
                                     f" ON {name} ({SQLITE_CURSOR}, {key})")

    def now(self, seconds_ago: float = 5.0) -> datetime:
        """Shop-local wall-clock time, naive, ``seconds_ago`` in the past."""
        moment = datetime.now(UTC) - timedelta(seconds=seconds_ago)
        return moment.astimezone(ZoneInfo(self.timezone)).replace(tzinfo=None, microsecond=0)

    def change(self, table: str, key: Any, *, at: datetime | None = None, **values: Any) -> None:
        """Update one row (``values``) and its ``updated_at`` (``at``, default a few seconds
        ago: what the engine reads has settled)."""
        target = TABLES[table]
        key_column = next(iter(target.primary_key.columns))
        values["updated_at"] = at or self.now()
        with self.begin() as conn:
            conn.execute(update(target).where(key_column == key).values(
                self._rows(table, [values], conn.dialect.name)[0]))

    def insert(self, table: str, rows: list[Row]) -> None:
        with self.begin() as conn:
            conn.execute(TABLES[table].insert(), self._rows(table, rows, conn.dialect.name))
