"""The fake shop's state: the generated rows, what tests changed, the clock and the site's
timezone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sandbox.shops.table import Shop, Table
from sandbox.shops.timeline import epoch_of
from sandbox.shops.woocommerce import records
from sandbox.shops.woocommerce.data import Row, generate
from sandbox.shops.woocommerce.errors import WooError, invalid_id
from sandbox.shops.woocommerce.settings import FakeWooSettings

RESOURCES = ("orders", "products", "variations", "customers", "coupons", "categories")
#: resources WooCommerce trashes on delete without ``force`` (the others refuse it, 501)
TRASHABLE = frozenset({"orders", "products", "variations", "coupons"})
_SORT_KEYS: dict[str, Callable[[Row], Any]] = {
    "id": lambda r: r.id,
    "created": lambda r: (r.created, r.id),
    "modified": lambda r: (r.modified, r.id),
}


class Store(Shop):
    builders = records.BUILDERS
    options = "variations"
    stamp = "modified"
    touches_product = True  # saving a variation re-syncs and saves its parent product
    tables: dict[str, Table[Row]]

    def __init__(self, settings: FakeWooSettings) -> None:
        generated = generate(settings.seed, customers=settings.customers,
                             orders=settings.orders, products=settings.products)
        super().__init__(settings, generated, missing=lambda name, _: invalid_id(name),
                         sort_keys=_SORT_KEYS)
        self.currency = settings.currency
        self.negative = generated.negative
        self.next_post_id = generated.next_post_id
        #: resource -> the status its listing answers until cleared (``/__fake__/…/fail``)
        self.failing: dict[str, int] = {}
        self.category_counts = Counter(
            records.product_category(p) for p in self.tables["products"].rows.values()
            if p.status == "publish")

    # time (now and local come from the clock) -------------------------------------------

    def gmt_text(self, epoch: int | None) -> str | None:
        return naive_text(epoch) if epoch else None

    def local_text(self, epoch: int | None) -> str | None:
        return naive_text(self.local(epoch)) if epoch else None

    # records ---------------------------------------------------------------------------

    def order_status_totals(self) -> Counter[str]:
        return Counter(r.status for r in self.tables["orders"].rows.values())

    # changes made through the /__fake__ API ---------------------------------------------

    def undated(self, resource: str) -> None:
        if resource == "categories":
            raise WooError(400, "fake_no_dates", "Categories have no dates to touch.")

    def patch(self, resource: str, record_id: int, fields: dict[str, Any], *, bump: bool = True) -> Row:
        table = self.tables[resource]
        row = table.row(record_id)
        fields = {k: v for k, v in fields.items()
                  if k not in ("id", "date_created", "date_modified")}
        if "date_created_gmt" in fields:
            row.created = epoch_of(str(fields.pop("date_created_gmt")))
        modified_at = fields.pop("date_modified_gmt", None)
        if "status" in fields:
            row.status = str(fields["status"])
        for key in ("name", "code"):
            if key in fields:
                row.name = str(fields[key])
        if "parent" in fields and resource == "categories":
            row.parent = int(fields["parent"])
        if "customer_id" in fields and resource == "orders":
            row.customer = int(fields["customer_id"])
        if resource == "customers" and ({"first_name", "last_name"} & fields.keys()):
            current = self.record(resource, row)
            row.name = f"{fields.get('first_name', current['first_name'])} " \
                       f"{fields.get('last_name', current['last_name'])}"
        if fields:
            table.save(record_id, fields)
        if modified_at is not None:
            row.modified = epoch_of(str(modified_at))
        elif bump and resource != "categories":
            self.touch(resource, record_id)
        table.changed()
        return row

    def create(self, resource: str, fields: dict[str, Any]) -> Row:
        table = self.tables[resource]
        now = self.now()
        if resource in ("products", "variations"):
            new_id, self.next_post_id = self.next_post_id, self.next_post_id + 1
        else:
            new_id = self.next_id(resource)
        row = Row(new_id, now, now)
        if resource == "orders":
            row.status, row.customer = "pending", int(fields.get("customer_id", 0))
        elif resource == "products":
            row.status, row.kind, row.name = "publish", str(fields.get("type", "simple")), f"New product {new_id}"
            row.amount = _cents(fields.get("regular_price", "10.00"))
        elif resource == "variations":
            parent = self.tables["products"].row(int(fields.get("parent_id", 0)))
            row.status, row.parent, row.kind = "publish", parent.id, "Red/M"
            row.name, row.amount = f"{parent.name} - Red, M", parent.amount
            self.children[parent.id].append(new_id)
            self.touch("products", parent.id)
        elif resource == "customers":
            row.kind, row.name = "customer", "New Customer"
        elif resource == "coupons":
            row.status, row.kind, row.name = "publish", "percent", f"coupon{new_id}"
            row.amount = _cents(fields.get("amount", "10.00"))
        else:
            row.created = row.modified = 0
            row.parent, row.name = int(fields.get("parent", 0)), f"Category {new_id}"
        table.add(row)
        return self.patch(resource, new_id, fields, bump=False)

    def delete(self, resource: str, record_id: int, *, force: bool) -> tuple[Row, dict[str, Any]]:
        table = self.tables[resource]
        row = table.row(record_id)
        before = self.record(resource, row)
        if not force and resource not in TRASHABLE:
            what = "Customers do" if resource == "customers" else "Resource does"
            raise WooError(501, "woocommerce_rest_trash_not_supported",
                           f"{what} not support trashing.")
        if force:
            self.remove(resource, record_id)
            return row, before
        if row.status == "trash":
            singular = {"orders": "shop_order", "coupons": "shop_coupon"}.get(resource, "product")
            raise WooError(410, "woocommerce_rest_already_trashed",
                           f"The {singular} has already been deleted.")
        row.status = "trash"
        self.touch(resource, record_id)
        return row, self.record(resource, row)


def naive_text(epoch: int) -> str:
    """``epoch`` as ``%Y-%m-%dT%H:%M:%S`` of UTC: the day's text drawn once (a page writes
    a dozen times a record), the time of day from the remainder."""
    day, second = divmod(epoch, 86400)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    return f"{_day_text(day)}T{hour:02d}:{minute:02d}:{second:02d}"


@lru_cache(maxsize=4096)
def _day_text(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")


def parse_datetime(text: str) -> tuple[int, bool]:
    """ISO-8601 → (seconds of a naive timeline, whether the text carried a zone)."""
    zoned = datetime.fromisoformat(text.strip().replace(" ", "T")).tzinfo is not None
    return epoch_of(text), zoned


def _cents(value: Any) -> int:
    try:
        return round(float(value) * 100)
    except (TypeError, ValueError):
        return 0
