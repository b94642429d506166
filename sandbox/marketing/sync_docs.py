"""How the sync routes are described in the OpenAPI description: what an item reads back
as, the bodies of a bulk write and a bulk delete, and their parameters
(``routes/sync.py`` registers the routes with them)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, create_model

from sandbox.marketing.answers import model_types, row
from sandbox.marketing.limits import MAX_DELETE_IDS, MAX_INT
from sandbox.marketing.openapi import parameter, ref
from sandbox.marketing.spec.items import Carrier, Customer, Order, OrderStatus
from sandbox.marketing.spec.resources import SYNC_RESOURCES, SyncResource
from sandbox.marketing.views import selectable_fields

#: what every stored item reads back with besides its own fields (``views.READ_META_FIELDS``)
_META: dict[str, Any] = {"id": int, "shop_id": int, "data_source_id": int, "source_label": str}
#: the fields of an order as it is read (``views.OrderReader``): its own, and those of its
#: customer, carrier and status; the views hold no customer gender or country, no delay
_ORDER_TYPES: dict[str, Any] = {
    **model_types(Order), **_META, "date": str, "contact_id": int,
    **model_types(Customer, prefix="customer_"), "customer_id": str, "customer_deleted": bool,
    "customer_gender": None, "customer_country": None,
    **model_types(Carrier, prefix="carrier_"), "carrier_delay": None, "carrier_deleted": bool,
    "carrier_active": bool,
    **model_types(OrderStatus, prefix="status_"), "status_active": bool, "status_deleted": bool,
}


def _row(resource: SyncResource) -> type[BaseModel]:
    """What one item of ``resource`` reads back as (``views.reader``)."""
    if resource.name == "orders":
        types = _ORDER_TYPES
    else:  # a status reads with is_active, the opposite of is_deleted (``views.status_view``)
        types = {**model_types(resource.model), **_META, "is_active": bool}
    fields = selectable_fields(resource)
    return row(f"{resource.model.__name__}Row", {name: types[name] for name in fields},
               f"A {resource.name[:-1]} as it reads back.")


ROWS = {name: _row(resource) for name, resource in SYNC_RESOURCES.items()}


def write_body(resource: SyncResource) -> dict[str, Any]:
    """The request body of a bulk write: each item is validated on its own (invalid ones are
    reported in ``rejected_items`` and the batch goes on), so the route takes any item, and
    the schema says what a valid one is."""
    return {
        "type": "array",
        "maxItems": resource.max_batch,
        "items": {"anyOf": [
            ref(resource.model, "validation"),
            {"description": "anything else: rejected in rejected_items, the batch goes on"},
        ]},
    }


def delete_body(resource: SyncResource, delete_key: str) -> type[BaseModel]:
    """``{"<delete_key>": [ids]}``: ids as text or integers (as JSON reads them: 64 bits)."""
    ids = list[StrictStr | Annotated[StrictInt, Field(ge=-(2**63), le=2**64 - 1)]]
    fields: dict[str, Any] = {delete_key: (ids, Field(max_length=MAX_DELETE_IDS))}
    return create_model(f"{resource.model.__name__}Deletion",
                        __config__=ConfigDict(extra="allow"), **fields)


SCOPE = parameter("id_data_source", {"type": "integer", "minimum": 0, "maximum": MAX_INT},
                   "Delete only the items of this data source.")


def parent_parameter(resource: SyncResource) -> dict[str, Any]:
    """The path's ``{parent_id}``: a number when the parent's id is one (``routes/sync.py``'s ``_parent``)."""
    assert resource.parent_field is not None
    numeric = "int" in str(resource.model.model_fields[resource.parent_field].annotation)
    schema = ({"type": "integer", "minimum": 0, "maximum": MAX_INT} if numeric
              else {"type": "string"})
    return {"name": "parent_id", "in": "path", "required": True, "schema": schema,
            "description": f"the {resource.parent_field} of the parent"}
