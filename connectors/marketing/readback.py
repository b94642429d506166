"""What the API's listings give back of a written item, to check that it arrived.

A listing shows most items with the fields they were written with; orders come back
flattened (``customer_id`` for ``customer.customer_id``) and statuses with their own set. A
``projection`` of a written item onto the fields its listing echoes can be compared with
what a listing returns, field for field, or through ``readback_hash``. Only what the listing
echoes of the item itself counts: an order's ``customer_email`` is the customer record's
email when the API holds that customer (a billing email may differ), so it is not compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from connectors.marketing.resources import SYNC_RESOURCES

#: fields a listing shows that a writer does not set
_NOT_ECHOED = frozenset({"id_data_source", "source_label", "shop_id"})

#: listing field -> path in the written item, where the two differ in shape
ECHOED: dict[str, dict[str, str]] = {
    "orders": {
        **{f: f for f in (
            "order_id", "lang", "status_id", "reference", "carrier_id", "cart_id", "amount",
            "amount_without_tax", "shipping_costs", "shipping_costs_without_tax", "currency",
            "is_confirmed", "created_at", "updated_at", "shipping_number", "voucher_used",
            "voucher_value", "address_delivery_id", "address_invoice_id", "cart_updated_at")},
        "customer_id": "customer.customer_id",
    },
    "statuses": {f: f for f in ("status_id", "lang", "name", "is_deleted", "created_at",
                                "updated_at")},
}


def echoed_fields(resource: str) -> dict[str, str]:
    """Listing field -> item path, for every field the listing of ``resource`` echoes."""
    if resource in ECHOED:
        return ECHOED[resource]
    model = SYNC_RESOURCES[resource].model
    return {f: f for f in model.model_fields if f not in _NOT_ECHOED}


def _at(item: Mapping[str, Any], path: str) -> Any:
    value: Any = item
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def projection(resource: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """The written ``item`` as its listing should show it."""
    return {field: _at(item, path) for field, path in echoed_fields(resource).items()}


def readback_hash(values: Mapping[str, Any]) -> str:
    return hashlib.blake2b(orjson.dumps(dict(values), option=orjson.OPT_SORT_KEYS),
                           digest_size=16).hexdigest()
