"""The sync (bulk-write) resources: save, update, bulk delete, and reading back.

Every item of a batch is validated on its own: invalid ones are reported in
``rejected_items`` and the valid ones of the same batch are still accepted. Accepted writes
go through the shop's pending queue and become visible after the visibility delay.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any

from fastapi import APIRouter, Depends, Request

from sandbox.marketing.answers import BulkResult, page, single
from sandbox.marketing.bulk import accept_batch, bulk_envelope, read_batch
from sandbox.marketing.contacts import derive_contact, forget_contact
from sandbox.marketing.errors import ApiError, not_found
from sandbox.marketing.http import integer, json_object, listed, ok, query, shop, store_of
from sandbox.marketing.limits import MAX_DELETE_IDS
from sandbox.marketing.listing import list_envelope
from sandbox.marketing.listing_openapi import listing_query
from sandbox.marketing.listing_parse import ListQuery, parse_list_query
from sandbox.marketing.openapi import documented
from sandbox.marketing.spec.examples import example_item
from sandbox.marketing.spec.query import Operator, OrderBy
from sandbox.marketing.spec.resources import SYNC_RESOURCES, SyncResource
from sandbox.marketing.store import Doc, Shop, applier, now_iso
from sandbox.marketing.sync_docs import ROWS, SCOPE, delete_body, parent_parameter, write_body
from sandbox.marketing.sync_items import ItemCheck, Mode, typed_parent
from sandbox.marketing.views import reader, selectable_fields

router = APIRouter()

#: a route handler (FastAPI reads its parameters from its signature)
Endpoint = Callable[..., Awaitable[Any]]
BY_CREATION = [OrderBy(field="id", type="asc")]


def _parent(resource: SyncResource, parent_id: str) -> str:
    """The parent id of a nested route, checked (a 400 when the parent field is a number and
    the path holds something else) and spelt as stored items compare it."""
    assert resource.parent_field is not None
    return str(typed_parent(resource, resource.parent_field, parent_id))


async def bulk_write(
    request: Request, shop: Shop, resource: SyncResource, mode: Mode, parent: str | None = None
) -> dict[str, Any]:
    batch = await read_batch(request, what=f"{resource.name} items", max_batch=resource.max_batch)
    collection = shop.collection(resource.name)
    pending_keys: set[str] = set()
    if mode == "update":
        pending_keys = {
            op["key"]
            for op in shop.pending
            if op["kind"] == "sync.save" and op["resource"] == resource.name
        }

    def known(key: str) -> bool:
        return key in collection or key in pending_keys

    check = ItemCheck(shop, resource, mode=mode, parent=parent, known=known)
    return accept_batch(request, shop, resource.name, batch, check)


async def bulk_delete(
    request: Request, shop: Shop, resource: SyncResource, delete_key: str,
    parent: str | None = None,
) -> dict[str, Any]:
    """Delete by the ids listed under ``delete_key`` (the resource's own) in the body."""
    body = await json_object(request)
    given = body.get(delete_key)
    ids = [_id_text(i) for i in given] if isinstance(given, list) else None
    if ids is None or None in ids:
        raise ApiError(400, f'The body must be {{"{delete_key}": [ids]}} (strings or integers)')
    if len(ids) > MAX_DELETE_IDS:
        raise ApiError(400, f"A bulk delete takes at most {MAX_DELETE_IDS} ids; got {len(ids)}."
                            " Split it into smaller requests.")
    scope = query(request).get("id_data_source")
    op = {
        "kind": "sync.delete",
        "resource": resource.name,
        "ids": ids,
        "data_source_id": None if scope is None else integer(scope, "id_data_source", low=0),
        "parent": parent,
    }
    shop.enqueue(op, store_of(request).visible_at())
    return bulk_envelope(len(ids))


def _id_text(raw: Any) -> str | None:
    """An id of a bulk delete as items are compared by it: text as sent, an integer in its
    digits (``5.0`` too: JSON, JSON Schema and the real service's JavaScript read it as 5),
    None for anything else."""
    if isinstance(raw, float) and raw.is_integer() and abs(raw) <= 2**53:
        raw = int(raw)
    if isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
        return str(raw)
    return None


@applier("sync.save")
def _apply_save(shop: Shop, op: Doc) -> None:
    collection = shop.collection(op["resource"])
    existing = collection.get(op["key"])
    doc = dict(op["doc"])
    doc["id"] = existing["id"] if existing else shop.next_id(op["resource"])
    if existing and existing.get("_created_at"):
        doc["_created_at"] = existing["_created_at"]
    else:
        doc["_created_at"] = now_iso()
    collection.put(op["key"], doc)
    if op["resource"] == "customers":
        if existing and existing["email"].lower() != doc["email"].lower():
            forget_contact(shop, existing["email"])
        derive_contact(shop, doc)


@applier("sync.delete")
def _apply_delete(shop: Shop, op: Doc) -> None:
    resource = SYNC_RESOURCES[op["resource"]]
    collection = shop.collection(resource.name)
    for key, doc in collection.matching(resource.id_field, set(op["ids"])).items():
        if op["data_source_id"] is not None and doc["data_source_id"] != op["data_source_id"]:
            continue
        parent = op.get("parent")
        if parent is not None and (
            resource.parent_field is None or str(doc.get(resource.parent_field)) != parent
        ):
            continue
        collection.delete(key)
        if resource.name == "customers":
            forget_contact(shop, doc["email"])


def _wanted_ids(q: ListQuery, resource: SyncResource) -> set[str] | None:
    """The ids an AND filter on the resource's own id allows (IN or EQUALS), so that a read-back
    by ids builds views of those items only; None when no such filter narrows the listing."""
    for flt in q.filters:
        if flt.field == resource.id_field and flt.operator in (Operator.IN, Operator.EQUALS):
            return {str(v) for v in flt.values}
    return None


async def _list(
    request: Request,
    shop: Shop,
    resource: SyncResource,
    where: Callable[[Doc], bool] | None = None,
) -> dict[str, Any]:
    q = parse_list_query(query(request), selectable_fields(resource))
    read = reader(shop, resource)
    collection = shop.collection(resource.name)
    wanted = _wanted_ids(q, resource)
    # a copy: writes may be applied while the listing gives way to other requests
    docs = list((collection.docs if wanted is None
                 else collection.matching(resource.id_field, wanted)).values())
    views = (read(d) for d in docs if where is None or where(d))
    page, total = await listed(request, views, q, default_order=BY_CREATION)
    return list_envelope(page, total, q)


def _find(shop: Shop, resource: SyncResource, field: str, value: str) -> dict[str, Any]:
    read = reader(shop, resource)
    for doc in shop.collection(resource.name).matching(field, [value]).values():
        return ok(read(doc))
    raise not_found(f"{resource.name[:-1].capitalize()} with {field} {value!r}")


def _nested_endpoints(
    resource: SyncResource, parent_field: str, delete_key: str
) -> tuple[Endpoint, Endpoint, Endpoint, Endpoint]:
    """Save, update, bulk delete and list under one parent (``{parent_id}`` in the path,
    read from it here and declared by ``parent_parameter``, as its type is the resource's)."""

    async def save(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        parent = _parent(resource, request.path_params["parent_id"])
        return await bulk_write(request, the_shop, resource, "save", parent)

    async def update(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        parent = _parent(resource, request.path_params["parent_id"])
        return await bulk_write(request, the_shop, resource, "update", parent)

    async def delete(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        parent = _parent(resource, request.path_params["parent_id"])
        return await bulk_delete(request, the_shop, resource, delete_key, parent)

    async def listing(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        parent = _parent(resource, request.path_params["parent_id"])
        return await _list(request, the_shop, resource,
                           lambda d: str(d.get(parent_field)) == parent)

    return save, update, delete, listing


def _flat_endpoints(
    resource: SyncResource, delete_key: str
) -> tuple[Endpoint, Endpoint, Endpoint, Endpoint]:
    """Save, update, bulk delete and list a resource that has no parent."""

    async def save(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        return await bulk_write(request, the_shop, resource, "save")

    async def update(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        return await bulk_write(request, the_shop, resource, "update")

    async def delete(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        return await bulk_delete(request, the_shop, resource, delete_key)

    async def listing(request: Request, the_shop: Shop = Depends(shop)) -> Any:
        return await _list(request, the_shop, resource)

    return save, update, delete, listing


def _register(resource: SyncResource) -> None:
    """Add the write, delete and read routes of one sync resource."""
    name = resource.name
    tags: list[str | Enum] = [name]
    parent_field = resource.parent_field
    delete_key = resource.delete_key
    base = "/v1/" + resource.route
    example = [example_item(name)]
    path: list[dict[str, Any]] = []

    def write() -> dict[str, Any]:
        return documented(BulkResult, body=write_body(resource), example=example, query=path)

    if parent_field is not None:
        assert resource.bulk_route is not None

        async def save_across(request: Request, the_shop: Shop = Depends(shop)) -> Any:
            return await bulk_write(request, the_shop, resource, "save")

        router.add_api_route(
            f"/v1/{resource.bulk_route}", save_across, methods=["POST"], tags=tags,
            summary=f"save {name} across parents (items carry {parent_field})", **write(),
        )
        save, update, delete, listing = _nested_endpoints(resource, parent_field, delete_key)
        base = base.replace("{" + parent_field + "}", "{parent_id}")
        path = [parent_parameter(resource)]
    else:
        save, update, delete, listing = _flat_endpoints(resource, delete_key)

    max_note = f"a JSON array of at most {resource.max_batch} items"
    router.add_api_route(
        base, save, methods=["POST"], tags=tags, summary=f"save {name} ({max_note})", **write(),
    )
    router.add_api_route(
        base, update, methods=["PUT"], tags=tags,
        summary=f"update existing {name} ({max_note}; unknown ids are rejected)", **write(),
    )
    router.add_api_route(
        f"{base}/bulk-delete", delete, methods=["POST"], tags=tags,
        summary=f'bulk delete {name}: {{"{delete_key}": [ids]}}',
        **documented(BulkResult, body=delete_body(resource, delete_key),
                     query=[*path, SCOPE]),
    )
    router.add_api_route(
        base, listing, methods=["GET"], tags=tags, summary=f"list {name}",
        **documented(page(ROWS[name]), query=[*path, *listing_query(resource.model.__name__,
                                                         selectable_fields(resource))]),
    )


# routes with fixed segments first, so that `{customer_id}` does not swallow them
for _resource in sorted(SYNC_RESOURCES.values(), key=lambda r: r.parent_field is None):
    _register(_resource)


@router.get("/v1/customers/{customer_id}", tags=["customers"], summary="getCustomer",
            **documented(single(ROWS["customers"]), sends=[404]))
async def get_customer(customer_id: str, the_shop: Shop = Depends(shop)) -> Any:
    return _find(the_shop, SYNC_RESOURCES["customers"], "customer_id", customer_id)


@router.get("/v1/customers/{customer_id}/groups", tags=["customers"], summary="getCustomerGroups",
            **documented(single(ROWS["groups"], many=True), sends=[404]))
async def get_customer_groups(customer_id: str, the_shop: Shop = Depends(shop)) -> Any:
    customer = _find(the_shop, SYNC_RESOURCES["customers"], "customer_id", customer_id)["data"]
    wanted = set(customer.get("group_ids") or [])
    groups = [
        {k: v for k, v in g.items() if not k.startswith("_")}
        for g in the_shop.collection("groups").docs.values()
        if g["group_id"] in wanted
    ]
    return {"statusCode": 200, "data": groups}


@router.get("/v1/orders/id/{order_id}", tags=["orders"], summary="getOrderById",
            **documented(single(ROWS["orders"]), sends=[404]))
async def get_order(order_id: str, the_shop: Shop = Depends(shop)) -> Any:
    return _find(the_shop, SYNC_RESOURCES["orders"], "order_id", order_id)


@router.get("/v1/orders/reference/{reference}", tags=["orders"],
            summary="getOrderByReference", **documented(single(ROWS["orders"]), sends=[404]))
async def get_order_by_reference(reference: str, the_shop: Shop = Depends(shop)) -> Any:
    return _find(the_shop, SYNC_RESOURCES["orders"], "reference", reference)
