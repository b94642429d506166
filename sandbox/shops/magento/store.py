"""The fake shop's state: generated rows, fields changed by tests, the clock, admin tokens."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from sandbox.shops.magento import records
from sandbox.shops.magento.data import Row, generate, quote_id
from sandbox.shops.magento.errors import MagentoError, no_entity
from sandbox.shops.magento.settings import FakeMagentoSettings
from sandbox.shops.table import Shop, Table
from sandbox.shops.timeline import epoch_of

RESOURCES = ("orders", "customers", "products", "carts", "categories")
_SORT_KEYS: dict[str, Callable[[Row], Any]] = {"id": lambda r: r.id, "updated": lambda r: (r.updated, r.id)}
#: the row columns a patched field sets, by resource: field -> (column, its value)
_COLUMNS: dict[str, dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "orders": {"status": ("status", str), "state": ("state", str)},
    "customers": {"email": ("sku", str)},
    "products": {"sku": ("sku", str), "name": ("name", str),
                 "price": ("amount", lambda price: round(float(price) * 100)),
                 "status": ("active", lambda status: int(status) == 1)},
    "carts": {"is_active": ("active", bool), "items": ("count", len)},
    "categories": {"name": ("name", str), "is_active": ("active", bool), "parent_id": ("parent", int)},
}


def parse_time(value: Any) -> int:
    """``YYYY-MM-DD HH:MM:SS`` (or ISO 8601); naive values are UTC."""
    try:
        return epoch_of(str(value))
    except ValueError:
        raise MagentoError(400, 'Invalid date "%1"', [str(value)]) from None


class Store(Shop):
    builders = records.BUILDERS
    options = "products"  # a configurable product's children are products
    cascade = False
    tables: dict[str, Table[Row]]

    def __init__(self, settings: FakeMagentoSettings) -> None:
        generated = generate(settings.seed, customers=settings.customers, orders=settings.orders,
                             products=settings.products, carts=settings.active_carts)
        super().__init__(settings, generated, missing=no_entity, sort_keys=_SORT_KEYS)
        self.currency = settings.currency
        self.admin_tokens: dict[str, int] = {}

    # tokens (now comes from the clock) ------------------------------------------------

    def issue_admin_token(self, username: Any, password: Any) -> str:
        if (username, password) != (self.settings.admin_username, self.settings.admin_password):
            raise MagentoError(401, "The account sign-in was incorrect or your account is"
                                    " disabled temporarily. Please wait and try again later.")
        token = secrets.token_hex(16)
        self.admin_tokens[token] = self.now() + self.settings.admin_token_ttl
        return token

    def token_valid(self, token: str, *, fake_api: bool = False) -> bool:
        if secrets.compare_digest(token.encode(), self.settings.token.encode()):
            return self.settings.integration_bearer or fake_api
        expires = self.admin_tokens.get(token)
        return expires is not None and self.now() < expires

    # records ---------------------------------------------------------------------------

    def by_sku(self, sku: str) -> Row:
        for row in self.tables["products"].rows.values():
            if row.sku == sku:
                return row
        raise no_entity("products", sku)

    # changes made through the /__fake__ API ---------------------------------------------

    def patch(self, resource: str, record_id: int, fields: dict[str, Any], *, bump: bool = True) -> Row:
        table = self.tables[resource]
        row = table.row(record_id)
        fields = {k: v for k, v in fields.items() if k not in ("id", "entity_id")}
        if "created_at" in fields:
            row.created = parse_time(fields.pop("created_at"))
        updated = fields.pop("updated_at", None)
        for key, (column, value) in _COLUMNS[resource].items():
            if key in fields:
                setattr(row, column, value(fields[key]))
        if fields:
            table.save(record_id, fields)
        if updated is not None:
            row.updated = parse_time(updated)
        elif bump:
            row.updated = self.now()
        table.changed()
        return row

    def create(self, resource: str, fields: dict[str, Any]) -> Row:
        table = self.tables[resource]
        now = self.now()
        if resource == "carts":  # active carts have odd ids, ordered quotes even ones
            new_id = max((i for i in table.rows if i % 2), default=-1) + 2
        else:
            new_id = self.next_id(resource)
        row = Row(new_id, now, now)
        if resource == "orders":
            row.state, row.status = "new", "pending"
            row.customer = int(fields.get("customer_id") or 0)
            self.tables["carts"].add(Row(quote_id(new_id), now - 600, now, active=False,
                                         customer=row.customer, order=new_id, count=1))
        elif resource == "customers":
            row.name, row.sku = "New Customer", f"new.customer.{new_id}@example.com"
        elif resource == "products":
            row.kind, row.name, row.sku = "simple", f"New product {new_id}", f"MG{new_id:05d}"
            row.amount = 1000
        elif resource == "carts":
            row.customer, row.count = int(fields.get("customer_id") or 0), 1
        else:
            row.parent, row.name = 2, f"Category {new_id}"
        table.add(row)
        return self.patch(resource, new_id, fields, bump=False)
