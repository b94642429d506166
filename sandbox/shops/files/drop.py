"""The generated shop (``sandbox.shops.sql.data``) exported as a drop folder: one folder
per stream, in the three formats the files source reads.

- CSV for reference data, customers (two files) and addresses: naive shop-local times;
- JSON Lines for orders (one file per year of creation, lines inline, the customer as a
  nested object), carts and coupons: times with their UTC offset;
- Parquet for products and variants: typed columns, decimals, UTC timestamps.

Some rows are broken on purpose: a line of the last orders file is not JSON, a customers
row has no id and another has one field too many. Each file's modification time is set
in the past, in the order an exporter would have written them.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.shops.sql.data import Row, Shop

BROKEN_JSON = '{"id": 999999, "number": "SO-999999", "state": "paid", "total": 12.5'
FIRST_MTIME = datetime(2025, 6, 24, 23, 0, tzinfo=UTC)


class Drop:
    """Writes the files of one drop folder and remembers the record ids each stream holds
    (keys, and ``stream/file:line`` for rows that cannot be read)."""

    def __init__(self, root: Path, timezone: str = "Europe/Paris") -> None:
        self.root = root
        self.tz = ZoneInfo(timezone)
        self.ids: dict[str, list[str]] = {}
        self._files = 0

    def _path(self, stream: str, name: str) -> Path:
        folder = self.root / stream
        folder.mkdir(parents=True, exist_ok=True)
        return folder / name

    def _done(self, stream: str, rows: list[Row], key: str, path: Path,
              mtime: datetime | None) -> Path:
        """Note the ids of the file's ``rows`` and set its modification time."""
        self.ids.setdefault(stream, []).extend(str(row[key]) for row in rows)
        self._files += 1
        moment = mtime or FIRST_MTIME + timedelta(minutes=self._files)
        os.utime(path, ns=(int(moment.timestamp() * 1e9),) * 2)
        return path

    def _local(self, value: Any) -> Any:
        """CSV cells: naive local times, plain numbers, empty for null."""
        if value is None:
            return ""
        if isinstance(value, datetime):
            return value.strftime("%Y-%m-%d %H:%M:%S")
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def _zoned(self, value: Any) -> Any:
        """JSON values: times with their offset, decimals as numbers."""
        if isinstance(value, datetime):
            return value.replace(tzinfo=self.tz).isoformat()
        if isinstance(value, Decimal):
            return float(value)
        if isinstance(value, dict):
            return {k: self._zoned(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._zoned(v) for v in value]
        return value

    def csv(self, stream: str, name: str, rows: list[Row], key: str = "id",
            broken: Iterable[list[str]] = (), mtime: datetime | None = None) -> Path:
        path = self._path(stream, name)
        columns = list(rows[0]) if rows else [key]
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows([self._local(row[c]) for c in columns] for row in rows)
            start = len(rows) + 2
            for offset, fields in enumerate(broken):
                writer.writerow(fields)
                self.ids.setdefault(stream, []).append(f"{stream}/{name}:{start + offset}")
        return self._done(stream, rows, key, path, mtime)

    def jsonl(self, stream: str, name: str, rows: list[Row], key: str = "id",
              broken: Iterable[str] = (), mtime: datetime | None = None) -> Path:
        path = self._path(stream, name)
        lines = [json.dumps(self._zoned(row), ensure_ascii=False) for row in rows]
        for text in broken:  # in the middle of the file: the lines after it must still be read
            at = len(lines) // 2
            lines.insert(at, text)
            self.ids.setdefault(stream, []).append(f"{stream}/{name}:{at + 1}")
        path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
        return self._done(stream, rows, key, path, mtime)

    def parquet(self, stream: str, name: str, rows: list[Row], key: str = "id",
                mtime: datetime | None = None) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self._path(stream, name)
        typed = [{k: v.replace(tzinfo=self.tz).astimezone(UTC) if isinstance(v, datetime) else v
                  for k, v in row.items()} for row in rows]
        pq.write_table(pa.Table.from_pylist(typed), path)
        return self._done(stream, rows, key, path, mtime)


def order_export(shop: Shop) -> list[Row]:
    """Orders as the shop's exporter writes them: totals computed, customer nested, lines
    inline."""
    customers = {c["id"]: c for c in shop.tables["customers"]}
    paid = {state["code"]: state["paid"] for state in shop.tables["order_states"]}
    items: dict[int, list[Row]] = {}
    for item in shop.tables["order_items"]:
        items.setdefault(item["order_id"], []).append(
            {k: item[k] for k in ("product_id", "variant_id", "qty", "unit_price",
                                  "unit_price_excl")})
    out = []
    for order in shop.tables["orders"]:
        customer = customers.get(order["customer_id"])
        out.append({
            "id": order["id"], "number": order["number"], "state": order["state"],
            "paid": paid.get(order["state"], False), "cart_id": order["cart_id"],
            "customer": {"id": str(customer["id"]) if customer else f"guest:{order['email']}",
                         "email": order["email"],
                         "since": (customer or order)["created_at"]},
            "currency": order["currency"], "total": order["total"],
            "total_excl": order["total"] - order["total_tax"],
            "shipping_incl": order["shipping"] + order["shipping_tax"],
            "shipping": order["shipping"], "carrier_id": order["carrier_id"],
            "coupon": order["coupon_code"], "discount": order["discount"],
            "created_at": order["created_at"], "updated_at": order["updated_at"],
            "items": items.get(order["id"], [])})
    return out


def write_orders(drop: Drop, shop: Shop, *, broken: bool = True) -> None:
    """Orders, one JSON Lines file per year of creation (the last one with a broken line)."""
    by_year: dict[int, list[Row]] = {}
    for order in order_export(shop):
        by_year.setdefault(order["created_at"].year, []).append(order)
    years = sorted(by_year)
    for year in years:
        drop.jsonl("orders", f"orders-{year}.jsonl", by_year[year],
                   broken=[BROKEN_JSON] if broken and year == years[-1] else [])


def write_drop(root: Path, shop: Shop, *, timezone: str = "Europe/Paris",
               streams: Iterable[str] | None = None, broken: bool = True) -> Drop:
    """Export ``shop`` into ``root`` (only ``streams`` when given); return the Drop with
    the record ids of each stream."""
    drop = Drop(root, timezone)
    wanted = set(streams) if streams is not None else None
    t = shop.tables

    def want(stream: str) -> bool:
        return wanted is None or stream in wanted

    if want("statuses"):
        drop.csv("statuses", "order_states.csv", t["order_states"], key="code")
    for stream, table in (("carriers", "carriers"), ("groups", "customer_groups"),
                          ("categories", "categories"), ("manufacturers", "brands"),
                          ("addresses", "addresses"), ("images", "product_images")):
        if want(stream):
            drop.csv(stream, f"{table}.csv", t[table])
    if want("customers"):
        half = len(t["customers"]) // 2
        drop.csv("customers", "customers-1.csv", t["customers"][:half])
        width = len(t["customers"][0]) if t["customers"] else 1
        drop.csv("customers", "customers-2.csv", t["customers"][half:], broken=[
            ["", "nobody@example.org", *[""] * (width - 2)],
            ["77777", "too@many.example", *[""] * (width - 1)],
        ] if broken else [])
    for stream, table in (("products", "products"), ("variations", "variants")):
        if want(stream):
            drop.parquet(stream, f"{table}.parquet", t[table])
    if want("vouchers"):
        kinds = {"percent": "percentage_reduction", "shipping": "free_shipping"}
        drop.jsonl("vouchers", "coupons.jsonl", [
            {**c, "type": kinds.get(c["kind"], "amount_reduction"), "used": c["times_used"] > 0}
            for c in t["coupons"]])
    if want("carts"):
        items: dict[int, list[Row]] = {}
        for item in t["cart_items"]:
            items.setdefault(item["cart_id"], []).append(item)
        drop.jsonl("carts", "carts.jsonl", [{**c, "items": items.get(c["id"], [])}
                                            for c in t["carts"]])
    if want("orders"):
        write_orders(drop, shop, broken=broken)
    return drop


def touch_time(seconds_ago: float = 5.0) -> datetime:
    """A modification time a few seconds in the past: settled for the engine's read."""
    return datetime.now(UTC) - timedelta(seconds=seconds_ago)

