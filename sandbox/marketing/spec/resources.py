"""The server's table of sync (bulk-write) resources: where each is written, how many items
one request may carry, the key of its bulk delete and what identifies a stored item.

From the table of ``target-api.md`` ("Sync (bulk-write) resources"), in its order (the
order the routes are registered and described in).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from sandbox.marketing.spec import items


@dataclass(frozen=True)
class SyncResource:
    """One bulk-write resource as the server serves it.

    ``route`` is under ``/v1``. A nested resource (addresses under a customer, variations
    and images under a product) names its path parameter in ``parent_field`` and has a
    ``bulk_route`` that writes across parents (each item then carries ``parent_field``).
    A stored item is identified within its data source by ``id_field`` and, when
    ``lang_scoped``, its ``lang`` (one row per language).
    """

    name: str
    route: str
    max_batch: int
    delete_key: str
    id_field: str
    model: type[BaseModel]
    lang_scoped: bool = False
    parent_field: str | None = None
    bulk_route: str | None = None

    @property
    def key_fields(self) -> tuple[str, ...]:
        """The fields that identify a stored item within its data source."""
        return (self.id_field, "lang") if self.lang_scoped else (self.id_field,)


def _flat(name: str, route: str, max_batch: int, key: str, model: type[BaseModel],
          *, lang_scoped: bool = False) -> SyncResource:
    """A top-level resource: deleted by ``<key>s``, its items identified by ``<key>``."""
    return SyncResource(name, route, max_batch, f"{key}s", key, model, lang_scoped=lang_scoped)


def _nested(name: str, parent: str, collection: str, key: str, model: type[BaseModel],
            *, lang_scoped: bool = False) -> SyncResource:
    """A resource under a parent (``customers``, ``products``): 50 per request, like them."""
    return SyncResource(
        name, f"{parent}/{{{parent[:-1]}_id}}/{collection}", 50, f"{key}s", key, model,
        lang_scoped=lang_scoped, parent_field=f"{parent[:-1]}_id",
        bulk_route=f"{parent}/{collection}/bulk",
    )


SYNC_RESOURCES: dict[str, SyncResource] = {
    r.name: r
    for r in (
        _flat("customers", "customers", 50, "customer_id", items.Customer),
        _nested("addresses", "customers", "addresses", "address_id", items.CustomerAddress),
        _flat("groups", "customers-groups", 100, "group_id", items.CustomersGroup,
              lang_scoped=True),
        _flat("orders", "orders", 50, "order_id", items.Order),
        _flat("statuses", "orders-statuses", 100, "status_id", items.OrderStatus,
              lang_scoped=True),
        _flat("carriers", "orders-carriers", 100, "carrier_id", items.Carrier),
        _flat("products", "products", 50, "product_id", items.Product, lang_scoped=True),
        _nested("variations", "products", "variations", "variation_id", items.ProductVariation,
                lang_scoped=True),
        _nested("images", "products", "images", "image_id", items.ProductImage,
                lang_scoped=True),
        _flat("categories", "products-categories", 100, "category_id", items.Category,
              lang_scoped=True),
        _flat("manufacturers", "products-manufacturers", 100, "manufacturer_id",
              items.Manufacturer),
        _flat("vouchers", "vouchers", 50, "voucher_id", items.Voucher, lang_scoped=True),
        _flat("carts", "carts", 50, "cart_id", items.Cart),
    )
}

#: custom data records live under their definition, 20 per request; their bulk delete body
#: is a plain array of record ids
CUSTOM_DATA_RECORDS_ROUTE = "custom-data-records/{id_definition}"
CUSTOM_DATA_RECORDS_MAX_BATCH = 20
