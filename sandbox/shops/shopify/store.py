"""The fake shop's state: the generated rows, what tests changed, deletion events, the clock,
the cost buckets and the bulk operations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from sandbox.shops.hosting import TokenBucket
from sandbox.shops.shopify import names, records
from sandbox.shops.shopify.data import BASE, Row, generate
from sandbox.shops.shopify.settings import FakeShopifySettings
from sandbox.shops.table import Shop, Table
from sandbox.shops.timeline import epoch_of

RESOURCES = ("orders", "customers", "products", "variants", "collections", "checkouts",
             "discounts", "events")
#: deleting one of these writes a ``destroy`` event (subject type)
SUBJECT_TYPES = {"orders": "ORDER", "customers": "CUSTOMER", "products": "PRODUCT",
                 "collections": "COLLECTION", "discounts": "DISCOUNT_CODE_NODE"}
#: how a connection's ``sortKey`` orders its rows: the value, and the id to break ties
#: (a cursor holds both)
SORT_VALUES: dict[str, Callable[[Row], Any]] = {
    "ID": lambda r: r.id, "CHECKOUT_ID": lambda r: r.id, "ORDER_NUMBER": lambda r: r.id,
    "RELEVANCE": lambda r: r.id, "POSITION": lambda r: r.id,
    "CREATED_AT": lambda r: r.created, "PROCESSED_AT": lambda r: r.created,
    "STARTS_AT": lambda r: r.created, "UPDATED_AT": lambda r: r.updated,
    "ENDS_AT": lambda r: r.updated, "TITLE": lambda r: r.name.casefold(),
    "NAME": lambda r: r.name.casefold(), "CUSTOMER_NAME": lambda r: r.customer,
    "TOTAL_PRICE": lambda r: r.amount, "VENDOR": lambda r: r.extra,
    "PRODUCT_TYPE": lambda r: r.kind, "SKU": lambda r: r.id}


def _then_id(value: Callable[[Row], Any]) -> Callable[[Row], Any]:
    return lambda r: (value(r), r.id)


SORT_KEYS = {name: _then_id(value) for name, value in SORT_VALUES.items()}


class NotFound(Exception):
    pass


def _not_found(resource: str, record_id: int) -> NotFound:
    return NotFound(f"{resource} {record_id}")


class Bucket(TokenBucket):
    """The app's cost bucket on the shop: ``capacity`` points refilled at ``rate`` per
    second; a query spends its cost in points (``roots.run``)."""

    def __init__(self, size: float, rate: float) -> None:
        super().__init__(rate, capacity=size)

    def status(self) -> dict[str, float]:
        return {"maximumAvailable": float(self.capacity),
                "currentlyAvailable": int(self.level()), "restoreRate": float(self.rate)}


class Store(Shop):
    builders = records.BUILDERS
    options = "variants"
    touches_product = True  # a variant's save bumps its product
    tables: dict[str, Table[Row]]

    def __init__(self, settings: FakeShopifySettings) -> None:
        generated = generate(settings.seed, customers=settings.customers,
                             orders=settings.orders, products=settings.products,
                             checkouts=settings.checkout_count)
        super().__init__(settings, generated, missing=_not_found, sort_keys=SORT_KEYS)
        self.currency = settings.currency
        self.variant_position = {vid: i for kids in self.children.values()
                                 for i, vid in enumerate(kids)}
        self.collection_sizes = Counter(
            h for p in self.tables["products"].rows.values()
            for h in ("all", names.NOUNS.get(p.kind, "")) if h)
        self._collections = {r.kind: r for r in self.tables["collections"].rows.values()}
        self.bucket = Bucket(settings.bucket_size, settings.restore_rate)
        self.bulk: dict[int, Any] = {}  # id -> BulkOperation (bulk.py)
        self.stats: Counter[str] = Counter()
        self.bulk_faults: list[str] = []  # failures the next bulk operations meet (bulk.py)
        self.version = 0  # bumped by every change, so customer records can be cached
        self._customers: dict[int, tuple[int, dict[str, Any]]] = {}
        orders = Counter(r.customer for r in self.tables["orders"].rows.values() if r.customer)
        self.customer_totals = {cid: (n, n * 4200) for cid, n in orders.items()}

    def changed(self, resource: str) -> None:
        super().changed(resource)
        self.version += 1

    def collection_ref(self, handle: str) -> dict[str, Any] | None:
        row = self._collections.get(handle)
        if row is None:
            return None
        return {"__typename": "Collection", "id": f"gid://shopify/Collection/{row.id}",
                "legacyResourceId": str(row.id), "handle": row.kind, "title": row.name}

    def customer_record(self, row: Row) -> dict[str, Any]:
        """A customer's record, cached until the next change (orders embed it)."""
        cached = self._customers.get(row.id)
        if cached is None or cached[0] != self.version:
            cached = (self.version, self.record("customers", row))
            self._customers[row.id] = cached
        return cached[1]

    # changes made through the /__fake__ API ---------------------------------------------

    def patch(self, resource: str, record_id: int, fields: dict[str, Any]) -> Row:
        row = self.tables[resource].row(record_id)
        fields = {k: v for k, v in fields.items() if k not in ("id", "legacyResourceId")}
        updated = fields.pop("updatedAt", None)
        for key, attr in (("displayFinancialStatus", "status"), ("status", "status"),
                          ("state", "status"), ("title", "name")):
            if key in fields and resource != "checkouts":
                setattr(row, attr, str(fields[key]))
        if resource == "checkouts" and "completedAt" in fields:
            row.extra = "completed" if fields.pop("completedAt") else ""
        if fields:
            self.tables[resource].patches.setdefault(record_id, {}).update(fields)
        self.changed(resource)
        if updated is not None:
            row.updated = epoch_of(str(updated), self.tz)  # naive: shop-local
        else:
            self.touch(resource, record_id)
        return row

    def create(self, resource: str, fields: dict[str, Any]) -> Row:
        table = self.tables[resource]
        now = self.now()
        new_id = self.next_id(resource, BASE[resource])
        row = Row(new_id, now, now)
        if resource == "orders":
            row.status, row.name = "PENDING", f"#{1001 + len(table.rows) + 1000}"
            row.customer = int(fields.pop("customer", 0) or 0)
        elif resource == "products":
            row.status, row.kind, row.name, row.amount, row.extra = (
                "ACTIVE", "Mug", "New product", 1500, names.VENDORS[0])
            vid = self.next_id("variants", BASE["variants"])
            self.tables["variants"].add(Row(vid, now, now, "ACTIVE", parent=new_id,
                                            name="Default Title", amount=1500))
            self.children[new_id].append(vid)
        elif resource == "customers":
            row.status, row.name = "ENABLED", "New Customer"
        elif resource == "checkouts":
            row.status = "open"
            row.customer = int(fields.pop("customer", 0) or 0)
        table.rows[new_id] = row
        self.changed(resource)
        if fields:
            table.patches[new_id] = dict(fields)
        return row

    def delete(self, resource: str, record_id: int) -> Row:
        row: Row = self.remove(resource, record_id)
        subject = SUBJECT_TYPES.get(resource)
        if subject is not None:
            event_id = self.next_id("events", BASE["events"])
            typename = subject.title().replace("_", "")
            self.tables["events"].add(Row(event_id, self.now(), self.now(), "destroy",
                                          parent=record_id, name=f"{typename} was deleted.",
                                          extra=subject))
        return row
