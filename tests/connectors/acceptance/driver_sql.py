"""The SQL connector on a generated shop database, for the acceptance suite: PostgreSQL when
``SHOPSYNC_TEST_POSTGRES_URL`` is set (as in CI), else a SQLite file. The stream is the fake
shop's orders query, lines from their child table, as ``shopsync demo --platform sql`` reads
them."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sqlalchemy import create_engine, delete, text
from sqlalchemy.engine import make_url

from connectors.http.retry import RetryPolicy
from connectors.sources.sql import SqlConfig, SqlConnector
from sandbox.shops.sql.config import STREAMS, TIMEZONE
from sandbox.shops.sql.data import generate
from sandbox.shops.sql.db import TABLES, FakeDatabase

POSTGRES_URL = os.environ.get("SHOPSYNC_TEST_POSTGRES_URL")
NOT_APPLICABLE = {
    "throttling": "a database has no request budget: no rate limit to meet",
    "server_errors": "a database answers no HTTP: a failed query is a SourceError, not a retry",
    "pacing": "a database has no request budget to pace to",
}


@dataclass
class Handle:
    url: str
    stream: str
    page_size: int
    order_ids: list[int]
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    #: the stream the connector is configured with: a stream is a query over tables, and
    #: every stream finds deletions alike (its keys' id set)
    deletable: ClassVar[dict[str, str]] = {"orders": "orders"}

    def connector(self, *, bad_credentials: bool = False,
                  retry: RetryPolicy | None = None) -> SqlConnector:
        url = make_url(self.url)
        if bad_credentials:
            url = url.set(password="not-the-password")
        return SqlConnector(SqlConfig(
            url=url.render_as_string(hide_password=False), timezone=TIMEZONE,
            page_size=self.page_size, streams={self.stream: STREAMS[self.stream]}))

    def ids(self) -> set[str]:
        return {str(i) for i in self.order_ids}

    def delete(self, stream: str, record_id: str) -> None:
        """Delete the order's row and its lines, as the shop's own database would."""
        engine = create_engine(self.url)
        try:
            with engine.begin() as conn:
                items, orders = TABLES["order_items"], TABLES[self.deletable[stream]]
                conn.execute(delete(items).where(items.c.order_id == int(record_id)))
                conn.execute(delete(orders).where(orders.c.id == int(record_id)))
        finally:
            engine.dispose()

    def stop(self) -> None:
        for step in self.cleanup:
            step()


class Driver:
    platform = "sql-postgresql" if POSTGRES_URL else "sql-sqlite"
    stream = "orders"
    not_applicable = NOT_APPLICABLE if POSTGRES_URL else {
        **NOT_APPLICABLE, "bad_credentials": "SQLite has no credentials (PostgreSQL tests them"
                                             " when SHOPSYNC_TEST_POSTGRES_URL is set)"}

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        shop = generate(seed, orders=0 if empty else size, customers=0 if empty else 10,
                        products=0 if empty else 5)
        if POSTGRES_URL:
            admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
            schema = f"acceptance_{secrets.token_hex(5)}"
            with admin.connect() as conn:
                conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            url = make_url(POSTGRES_URL).update_query_dict(
                {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)

            def drop() -> None:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()

            cleanup = [drop]
        else:
            folder = Path(tempfile.mkdtemp(prefix="shopsync-acceptance-sql-"))
            url = f"sqlite:///{folder / 'shop.db'}"
            cleanup = [lambda: shutil.rmtree(folder, ignore_errors=True)]
        FakeDatabase(url, TIMEZONE).write(shop)
        return Handle(url, self.stream, page_size, shop.ids("orders"), cleanup)


DRIVER = Driver()
