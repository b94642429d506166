"""The one table of the API's sync resources: routes, batch sizes, keys and item models.

Everything that needs to know where a resource is written, how many items fit in one
request or what identifies an item (the client, the bulk writer, the engine) reads it here;
the sandbox keeps its own reading, compared with this one by a contract test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from connectors.marketing import items


@dataclass(frozen=True)
class SyncResource:
    """One bulk-write resource of the API.

    ``route`` is relative to the base URL (which ends in ``/v1``). A nested resource
    (addresses under a customer, variations and images under a product) also has a
    ``parent_field`` naming the path parameter, and ``bulk_route`` for writes that span
    parents (their items carry ``parent_field``).
    """

    name: str
    route: str
    max_batch: int
    delete_key: str | None
    id_field: str
    model: type[BaseModel]
    lang_scoped: bool = False
    parent_field: str | None = None
    bulk_route: str | None = None
    extra_key_fields: tuple[str, ...] = field(default=())

    @property
    def key_fields(self) -> tuple[str, ...]:
        """Fields that identify one item within a shop and data source."""
        return (self.id_field, *(("lang",) if self.lang_scoped else ()), *self.extra_key_fields)

    def item_route(self, parent_id: str | int | None = None) -> str:
        if self.parent_field is None:
            return self.route
        if parent_id is None:
            raise ValueError(f"{self.name} are written under a {self.parent_field}")
        return self.route.replace("{" + self.parent_field + "}", str(parent_id))


SYNC_RESOURCES: dict[str, SyncResource] = {
    r.name: r
    for r in [
        SyncResource("customers", "customers", 50, "customer_ids", "customer_id", items.Customer),
        SyncResource(
            "addresses",
            "customers/{customer_id}/addresses",
            50,
            "address_ids",
            "address_id",
            items.CustomerAddress,
            parent_field="customer_id",
            bulk_route="customers/addresses/bulk",
        ),
        SyncResource(
            "groups", "customers-groups", 100, "group_ids", "group_id", items.CustomersGroup,
            lang_scoped=True,
        ),
        SyncResource("orders", "orders", 50, "order_ids", "order_id", items.Order),
        SyncResource(
            "statuses", "orders-statuses", 100, "status_ids", "status_id", items.OrderStatus,
            lang_scoped=True,
        ),
        SyncResource("carriers", "orders-carriers", 100, "carrier_ids", "carrier_id", items.Carrier),
        SyncResource(
            "products", "products", 50, "product_ids", "product_id", items.Product,
            lang_scoped=True,
        ),
        SyncResource(
            "variations",
            "products/{product_id}/variations",
            50,
            "variation_ids",
            "variation_id",
            items.ProductVariation,
            lang_scoped=True,
            parent_field="product_id",
            bulk_route="products/variations/bulk",
        ),
        SyncResource(
            "images",
            "products/{product_id}/images",
            50,
            "image_ids",
            "image_id",
            items.ProductImage,
            lang_scoped=True,
            parent_field="product_id",
            bulk_route="products/images/bulk",
        ),
        SyncResource(
            "categories", "products-categories", 100, "category_ids", "category_id",
            items.Category, lang_scoped=True,
        ),
        SyncResource(
            "manufacturers", "products-manufacturers", 100, "manufacturer_ids", "manufacturer_id",
            items.Manufacturer,
        ),
        SyncResource(
            "vouchers", "vouchers", 50, "voucher_ids", "voucher_id", items.Voucher,
            lang_scoped=True,
        ),
        SyncResource("carts", "carts", 50, "cart_ids", "cart_id", items.Cart),
    ]
}

#: custom data records are written under their definition, 20 at a time, and deleted by a
#: plain array of record ids
CUSTOM_DATA_RECORDS_ROUTE = "custom-data-records/{id_definition}"
CUSTOM_DATA_RECORDS_MAX_BATCH = 20
