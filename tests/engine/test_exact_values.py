"""Values arrive exactly or are held back with a reason: a drop folder and a SQLite database
synced into the sandbox, then the destination and the ledger read.

An id is carried as the text the source gave (never through a float, and two ids never
collapse into one item); a number the API cannot represent, text that is not valid in the
source's encoding, a date past the calendar's range quarantine their row with a reason
naming the field — and the rows around it still arrive."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipelines.engine.state import ItemStatus
from sandbox.shops.files.drop import touch_time
from tests.engine.support import EngineSetup, MakeSetup

SOURCE = "exact"
UPDATED = "2025-01-02 10:00:00"
PRODUCTS = {"key": "id", "cursor": "updated_at", "columns": {
    "product_id": "id", "name": "name", "price": "price", "quantity_remaining": "stock",
    "created_at": "updated_at"}, "constants": {"description": "", "is_active": True},
    "templates": {"link": "https://shop.example/p/{id}"}}
CUSTOMERS = {"key": "id", "cursor": "updated_at", "columns": {
    "customer_id": "id", "email": "email", "first_name": "name", "last_name": "name",
    "created_at": "updated_at"}, "constants": {
    "is_opt_in": False, "is_newsletter_subscribed": False, "is_active": True}}
ORDERS = {"key": "id", "cursor": "updated_at", "columns": {
    "order_id": "id", "amount": "total", "amount_without_tax": "total",
    "customer.customer_id": "customer", "customer.email": "email",
    "customer.created_at": "updated_at", "created_at": "updated_at"}, "constants": {
    "status_id": "paid", "cart_id": "none", "shipping_costs": 0,
    "shipping_costs_without_tax": 0, "is_confirmed": True, "products": []}}


@dataclass
class Setup(EngineSetup):
    root: Path

    def held(self, resource: str) -> dict[str, list[str]]:
        """Quarantined items of ``resource``: source record id -> reasons."""
        return {e.source_record_id: list(e.errors) for e in
                self.state.entries(SOURCE, resource, {ItemStatus.QUARANTINED})}


def product(id_: str, **values: Any) -> dict[str, Any]:
    return {"id": id_, "name": f"Product {id_}", "price": "9.50", "stock": "3",
            "updated_at": UPDATED, **values}


def settled(path: Path) -> Path:
    """A file written a few seconds ago: past the engine's settled read horizon."""
    os.utime(path, ns=(int(touch_time().timestamp() * 1e9),) * 2)
    return path


def write_csv(path: Path, rows: list[dict[str, Any]], encoding: str = "utf-8") -> Path:
    with open(path, "w", encoding=encoding, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return settled(path)


def write_bytes(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return settled(path)


@pytest.fixture
def drop(engine_setup: MakeSetup, tmp_path: Path):
    """A setup on a drop folder of the given streams (its files written by the test)."""

    def make(**streams: dict[str, Any]) -> Setup:
        root = tmp_path / "drop"
        for stream in streams:
            (root / stream).mkdir(parents=True, exist_ok=True)
        return engine_setup(Setup, {"name": SOURCE, "platform": "files", "connection": {
            "path": str(root), "streams": streams}}, root=root)

    return make


def stored_products(setup: Setup) -> dict[int, dict[str, Any]]:
    return {p["product_id"]: p for p in setup.listed("/products")}


# ids -------------------------------------------------------------------------------------

def test_order_ids_beyond_two_to_the_53_arrive_as_written_and_stay_apart(drop):
    setup = drop(orders=ORDERS)
    ids = ["123456789012345678901", "123456789012345678902", "-98765432109876543210987"]
    lines = [f'{{"id": {i}, "total": 12.5, "customer": "c1", "email": "c1@shop.example",'
             f' "updated_at": "2025-01-02T10:00:00Z"}}' for i in ids]
    write_bytes(setup.root / "orders" / "orders.jsonl", "\n".join(lines).encode())

    report = setup.run_by_stream()["orders"]

    assert sorted(o["order_id"] for o in setup.listed("/orders")) == sorted(ids)
    assert report.counts["orders"]["accepted"] == 3


def test_a_floating_point_id_beyond_two_to_the_53_is_held_back_not_rounded(
        engine_setup: MakeSetup, tmp_path: Path):
    """SQLite keeps an integer past 64 bits as a REAL: two such ids may be one float, and
    no text of it is the id the shop wrote."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE orders (id REAL, total TEXT, customer TEXT, email TEXT,"
                   " updated_at TEXT)")
        db.execute("INSERT INTO orders VALUES (123456789012345678901, '12.50', 'c1',"
                   f" 'c1@shop.example', '{UPDATED}')")
        db.execute(f"INSERT INTO orders VALUES (17, '3.00', 'c1', 'c1@shop.example', '{UPDATED}')")
    setup = engine_setup(Setup, {"name": SOURCE, "platform": "sql", "connection": {
        "url": f"sqlite:///{path}", "streams": {"orders": {**ORDERS, "table": "orders"}}}}, root=tmp_path)

    setup.run()

    assert [o["order_id"] for o in setup.listed("/orders")] == ["17"]
    (reasons,) = setup.held("orders").values()
    assert any("order_id" in r and "floating-point" in r for r in reasons), reasons


def test_an_id_in_digits_other_than_ascii_is_never_taken_for_a_number(drop):
    """``²`` is a digit to ``str.isdigit`` but no number to ``int``; ``١٢`` is 12 to
    ``int``: as a product id (an integer) both are held back, as an order id (text) they
    are carried as written."""
    setup = drop(products=PRODUCTS, orders=ORDERS)
    write_csv(setup.root / "products" / "products.csv",
              [product("12"), product("²"), product("١٢"), product("13")])
    write_csv(setup.root / "orders" / "orders.csv", [
        {"id": id_, "total": "5.00", "customer": "c1", "email": "c1@shop.example",
         "updated_at": UPDATED} for id_ in ("²", "7")])

    setup.run()

    products = stored_products(setup)
    assert sorted(products) == [12, 13]
    assert products[12]["name"] == "Product 12"
    held = setup.held("products")
    assert sorted(held) == sorted(["²", "١٢"])
    assert all(any("product_id" in r and "ASCII digits" in r for r in reasons)
               for reasons in held.values()), held
    assert sorted(o["order_id"] for o in setup.listed("/orders")) == ["7", "²"]


# numbers ---------------------------------------------------------------------------------

def test_an_integer_past_the_api_range_is_held_back_with_its_field(drop):
    """``1e10000000`` is refused before any conversion: ``int(Decimal)`` would not return."""
    setup = drop(products=PRODUCTS)
    huge = ["1e10000000", "99999999999999999999", "-1e30"]
    write_csv(setup.root / "products" / "products.csv",
              [product("1"), *(product(str(10 + i), stock=s) for i, s in enumerate(huge)),
               product("2")])

    setup.run()

    assert sorted(stored_products(setup)) == [1, 2]
    held = setup.held("products")
    assert sorted(held) == ["10", "11", "12"]
    for stock, key in zip(huge, ("10", "11", "12"), strict=True):
        assert held[key] == [f"quantity_remaining: {stock!r} is beyond the range of the"
                             " API's integers (signed 64-bit)"]


def test_a_price_that_is_not_a_finite_number_is_held_back_not_sent(drop):
    setup = drop(products=PRODUCTS)
    prices = ["Infinity", "-inf", "NaN", "1e400"]
    write_csv(setup.root / "products" / "products.csv",
              [product("1"), *(product(str(10 + i), price=p) for i, p in enumerate(prices))])

    report = setup.run_by_stream()["products"]

    assert sorted(stored_products(setup)) == [1]
    assert report.counts["products"].get("rejected", 0) == 0
    held = setup.held("products")
    assert len(held) == len(prices)
    assert all(any(r.startswith("price:") and "finite" in r for r in reasons)
               for reasons in held.values()), held


# text ------------------------------------------------------------------------------------

def test_an_email_with_a_trailing_newline_is_held_back(drop):
    setup = drop(customers=CUSTOMERS)
    write_csv(setup.root / "customers" / "customers.csv", [
        {"id": "c1", "email": "ann@shop.example", "name": "Ann", "updated_at": UPDATED},
        {"id": "c2", "email": "bob@shop.example\n", "name": "Bob", "updated_at": UPDATED}])

    setup.run()

    assert [c["customer_id"] for c in setup.listed("/customers")] == ["c1"]
    assert any(r.startswith("email:") for r in setup.held("customers")["c2"])


def test_a_cell_past_the_csv_field_limit_holds_back_its_row_only(drop):
    setup = drop(products=PRODUCTS)
    write_csv(setup.root / "products" / "products.csv", [
        product("1"), product("2", name="x" * (csv.field_size_limit() + 1)),
        product("3"), product("4")])

    setup.run()

    assert sorted(stored_products(setup)) == [1, 3, 4]
    held = setup.held("products")
    assert list(held) == ["products/products.csv:3"]
    assert "field limit" in held["products/products.csv:3"][0]


def test_bytes_that_are_not_text_in_the_source_encoding_hold_back_their_row(drop):
    setup = drop(products=PRODUCTS)
    path = write_csv(setup.root / "products" / "products.csv",
                     [product("1", name="Café"), product("2", name="Caf?"), product("3")])
    write_bytes(path, path.read_bytes().replace(b"Caf?", b"Caf\xe9"))  # Latin-1, not UTF-8

    setup.run()

    products = stored_products(setup)
    assert sorted(products) == [1, 3]
    assert products[1]["name"] == "Café"
    assert not any("\ufffd" in p["name"] for p in products.values())
    (reasons,) = setup.held("products").values()
    assert reasons[0].startswith("products/products.csv:3: ")
    assert "utf-8" in reasons[0] and "\\xe9" in reasons[0]


def test_a_stream_may_name_the_encoding_of_its_files(drop):
    setup = drop(products={**PRODUCTS, "encoding": "latin-1"})
    write_csv(setup.root / "products" / "products.csv",
              [product("1", name="Crème brûlée")], encoding="latin-1")

    setup.run()

    assert stored_products(setup)[1]["name"] == "Crème brûlée"


def test_a_sqlite_text_that_is_not_utf8_holds_back_its_row_only(engine_setup: MakeSetup,
                                                               tmp_path: Path):
    """SQLite keeps any bytes as TEXT; sqlite3 would fail the whole page on them."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE products (id INTEGER, name TEXT, price TEXT, stock INTEGER,"
                   " updated_at TEXT)")
        db.executemany("INSERT INTO products VALUES (?, ?, '9.50', 3, ?)",
                       [(1, "Café", UPDATED), (3, "Tea", UPDATED)])
        db.execute("INSERT INTO products VALUES (2, CAST(X'436166e9' AS TEXT), '9.50', 3, ?)",
                   (UPDATED,))
    setup = engine_setup(Setup, {"name": SOURCE, "platform": "sql", "connection": {
        "url": f"sqlite:///{path}", "streams": {"products": {**PRODUCTS, "table": "products"}}}},
        root=tmp_path)

    setup.run()

    assert {k: p["name"] for k, p in stored_products(setup).items()} == {1: "Café", 3: "Tea"}
    assert setup.held("products") == {"2": ["name: bytes that are not valid text (\\xe9)"]}


def test_json_lines_with_bytes_that_are_not_utf8_hold_back_that_line(drop):
    setup = drop(products=PRODUCTS)
    good = [json.dumps(product(i)).encode() for i in ("1", "3")]
    bad = json.dumps(product("2", name="Caf?")).encode().replace(b"Caf?", b"Caf\xe9")
    write_bytes(setup.root / "products" / "products.jsonl", b"\n".join([good[0], bad, good[1]]))

    setup.run()

    assert sorted(stored_products(setup)) == [1, 3]
    (reasons,) = setup.held("products").values()
    assert reasons[0].startswith("products/products.jsonl:2: ") and "utf-8" in reasons[0]


# dates -----------------------------------------------------------------------------------

def test_a_date_past_the_calendar_range_is_held_back_with_its_field(drop):
    """``9999-12-31T23:59:59-14:00`` is a valid text but lies past year 9999 in UTC."""
    setup = drop(products=PRODUCTS)
    write_csv(setup.root / "products" / "products.csv", [
        product("1"), product("10", updated_at="9999-12-31T23:59:59-14:00"),
        product("11", updated_at="0001-01-01T00:00:00+14:00"), product("2")])

    setup.run()

    assert sorted(stored_products(setup)) == [1, 2]
    held = setup.held("products")
    assert sorted(held) == ["10", "11"]
    assert all(any(r.startswith("created_at:") and "range of dates" in r for r in reasons)
               for reasons in held.values()), held
