"""Which target resources point at which: reference data is materialized first."""

from __future__ import annotations

#: resource -> the resources its items refer to
REFERS_TO: dict[str, tuple[str, ...]] = {
    "orders": ("statuses", "carriers", "customers", "products", "vouchers"),
    "carts": ("customers", "products"),
    "customers": ("groups",),
    "addresses": ("customers",),
    "products": ("categories", "manufacturers"),
    "variations": ("products",),
    "images": ("products",),
}
