"""The fake shop's state: the generated rows, what tests changed, the clock, and the shop's
time zone (every date shown is wall-clock time in it, as PrestaShop's MySQL columns are)."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from sandbox.shops.prestashop import records, sales  # noqa: F401  (sales registers builders)
from sandbox.shops.prestashop.data import Row, generate
from sandbox.shops.prestashop.fields import DATED, INDEX
from sandbox.shops.prestashop.records import ZERO_DATE, I18n
from sandbox.shops.prestashop.settings import FakePrestaSettings
from sandbox.shops.table import Shop, Table

#: resources with a ``deleted`` flag: a soft delete sets it instead of removing the row
SOFT_DELETABLE = frozenset({"customers", "addresses", "carriers", "order_states"})
#: the columns a new record starts with, by resource (an order's come from its cart)
_NEW: dict[str, dict[str, Any]] = {
    "carts": {"flag": 1, "extra": 1}, "combinations": {"extra": 101}, "categories": {"parent": 2},
    "customers": {"parent": 1, "state": 1, "name": "New Customer"},
    "products": {"flag": 0, "state": 1, "parent": 2, "amount": 1000}}


class Store(Shop):
    builders = records.BUILDERS
    options = "combinations"
    stamp = "modified"
    settings: FakePrestaSettings
    tables: dict[str, Table[Row]]

    def __init__(self, settings: FakePrestaSettings) -> None:
        abandoned = settings.abandoned_carts
        generated = generate(settings.seed, customers=settings.customers,
                             orders=settings.orders, products=settings.products,
                             abandoned=settings.orders // 3 if abandoned is None else abandoned,
                             languages=settings.languages)
        # date_upd as the webservice compares it: local text, ties in id order
        super().__init__(settings, generated,
                         sort_keys={"upd": lambda r: (self.local_text(r.modified), r.id)})
        self.titles = generated.titles
        self.addresses_of: dict[int, list[int]] = defaultdict(list)
        for addr in self.tables["addresses"].rows.values():
            if addr.customer and not addr.flag:
                self.addresses_of[addr.customer].append(addr.id)
        self.webservice_enabled = True

    # time (now and local come from the clock; local seconds are what MySQL compares) ----

    def local_text(self, epoch: int | None) -> str:
        if not epoch:
            return ZERO_DATE
        return datetime.fromtimestamp(self.local(epoch), UTC).strftime("%Y-%m-%d %H:%M:%S")

    def dates(self, row: Row) -> dict[str, str]:
        return {"date_add": self.local_text(row.created), "date_upd": self.local_text(row.modified)}

    # changes made through the /__fake__ API ---------------------------------------------

    def undated(self, resource: str) -> None:
        if resource not in DATED:
            raise ValueError(f"{resource} have no dates to touch")

    def patch(self, resource: str, record_id: int, fields: dict[str, Any], *,
              bump: bool = True) -> Row:
        """Change fields (``I18n`` ones as ``{language id: text}``); date_upd moves to now
        unless ``bump`` is False, as ObjectModel::update does."""
        table = self.tables[resource]
        row = table.rows[record_id]
        fields = {k: v for k, v in fields.items() if k not in ("id", "date_add", "date_upd")}
        for field, column in INDEX.get(resource, {}).items():
            if field in fields:
                setattr(row, column, int(fields[field] or 0))
        if resource == "products" and "active" in fields:
            row.state = int(bool(fields["active"]))
        if resource == "customers" and "deleted" in fields:
            row.flag = 2 if fields["deleted"] else 0
        table.save(record_id, {key: I18n({int(k): str(v) for k, v in value.items()})
                               if isinstance(value, dict) else value
                               for key, value in fields.items()})
        if bump and resource in DATED:
            row.modified = self.now()
        table.changed()
        return row

    def create(self, resource: str, fields: dict[str, Any]) -> Row:
        table = self.tables[resource]
        now = self.now()
        new_id = self.next_id(resource)
        dated = resource in DATED
        row = Row(new_id, now if dated else 0, now if dated else 0, **_NEW.get(resource, {}))
        if resource == "orders":
            cart_id = int(fields.pop("id_cart", 0) or 0)
            if not cart_id:  # a new order comes with its own new cart
                cart = self.create("carts", {"id_customer": fields.get("id_customer", 0)})
                cart_id = cart.id
            cart_row = self.tables["carts"].rows[cart_id]
            row.parent, row.customer = cart_id, cart_row.customer
            row.flag, row.extra, row.state = cart_row.flag, cart_row.extra, 2
        elif resource == "products":
            self.titles[new_id] = {1: f"New product {new_id}", 2: f"Nouveau produit {new_id}",
                                   3: f"Neues Produkt {new_id}", 4: f"New product {new_id}"}
        elif resource == "combinations":
            row.parent = int(fields.get("id_product", 0))
            self.children[row.parent].append(new_id)
        table.add(row)
        return self.patch(resource, new_id, fields, bump=False) if fields else row

    def delete(self, resource: str, record_id: int, *, soft: bool = False) -> None:
        table = self.tables[resource]
        row = table.rows[record_id]
        if soft:
            if resource not in SOFT_DELETABLE:
                raise ValueError(f"{resource} have no deleted flag")
            self.patch(resource, record_id, {"deleted": True})
            if resource == "addresses":
                row.flag = 1
            return
        self.remove(resource, record_id)

    def cart_ids_with_orders(self) -> set[int]:
        return {o.parent for o in self.tables["orders"].rows.values()}
