"""The ``connection`` of a source reading the fake drop folder: every stream, mapped.

The worked example of the files platform's configuration (see
``connectors/sources/files/README.md``): CSV columns by name, JSON Lines paths into nested
objects (``customer.email``), lines from a JSON list column, links from templates.

The drop folder is an export of the same generated shop as the fake database
(``sandbox.shops.files.drop``), so each stream maps the columns of the database's stream
(``sandbox.shops.sql.config``) but for what the exporter writes otherwise: the files a
stream is split into, lines inline, an order's customer nested, a voucher's type in the
API's words.
"""

from __future__ import annotations

from typing import Any

from sandbox.shops.sql.config import LINE_COLUMNS, TIMEZONE
from sandbox.shops.sql.config import STREAMS as TABLES

__all__ = ["STREAMS", "TIMEZONE", "connection"]

_INLINE_LINES = {"column": "items", "columns": LINE_COLUMNS}
#: what the exporter writes otherwise than the database holds it, by stream
_EXPORTED: dict[str, dict[str, Any]] = {
    "customers": {"pattern": "customers-*.csv"},
    "vouchers": {"columns": {"type_voucher": "type"}},
    "carts": {"lines": _INLINE_LINES},
    "orders": {"pattern": "orders-*.jsonl", "lines": _INLINE_LINES, "columns": {
        "customer.customer_id": "customer.id", "customer.email": "customer.email",
        "customer.created_at": "customer.since", "voucher_used": "coupon"}},
}


def _exported(name: str, table: dict[str, Any]) -> dict[str, Any]:
    """A database stream's spec as the files source reads the stream's export."""
    spec = {k: v for k, v in table.items() if k not in ("table", "query", "lines")}
    changes = _EXPORTED.get(name, {})
    return {**spec, **changes, "columns": {**table["columns"], **changes.get("columns", {})}}


STREAMS: dict[str, dict[str, Any]] = {name: _exported(name, table)
                                      for name, table in TABLES.items()}


def connection(path: str) -> dict[str, Any]:
    """The ``connection`` of a source on the fake drop folder at ``path``."""
    return {"path": path, "options": {"timezone": TIMEZONE}, "streams": STREAMS}
