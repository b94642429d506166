"""Custom data records (``/v1/custom-data-records/{id_definition}``): data, asynchronous
like sync writes. Each item of a batch is checked on its own against its definition (see
``custom_fields``); accepted items go through the shop's pending queue and become readable
after the visibility delay. The definitions are ``routes/custom_data.py``'s.

Save semantics of ``POST custom-data-records/{id_definition}``: when the definition has
``unique_keys``, an item whose unique-key values match an existing record updates that record
(the fields it carries; the others keep their values), else it is inserted with a new
auto-increment ``id``. ``PUT`` (items carry ``id``) and ``PATCH`` update by id and do not
re-check unique keys. Writes to a deactivated definition are refused with 400, reads work.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ConfigDict

from sandbox.marketing.answers import Answer, BulkResult, Done, page
from sandbox.marketing.bulk import accept_batch, bulk_envelope, read_batch
from sandbox.marketing.custom_fields import check_record, record_id, resolve_relations
from sandbox.marketing.errors import ApiError, not_found
from sandbox.marketing.http import json_body, json_object, listed, query, shop, store_of
from sandbox.marketing.limits import MAX_DELETE_IDS, MAX_INT
from sandbox.marketing.listing import list_envelope
from sandbox.marketing.listing_openapi import listing_query
from sandbox.marketing.listing_parse import parse_list_query
from sandbox.marketing.openapi import documented, parameter
from sandbox.marketing.routes.custom_data import (
    BY_ID,
    DONE,
    definitions,
    find_definition,
    record_fields,
    record_view,
    records_of,
)
from sandbox.marketing.spec.resources import (
    CUSTOM_DATA_RECORDS_MAX_BATCH,
    CUSTOM_DATA_RECORDS_ROUTE,
)
from sandbox.marketing.store import Doc, Shop, applier, now_iso

router = APIRouter(tags=["custom data"])

RECORDS_PATH = "/v1/" + CUSTOM_DATA_RECORDS_ROUTE


class Record(Answer):
    """A record: its id and the fields of its definition."""

    model_config = ConfigDict(extra="allow")

    id: int | None = None


#: a record id (``custom_fields.record_id``): a positive 64-bit integer, or its digits
_RECORD_NUMBER = {"type": "integer", "minimum": 1, "maximum": MAX_INT}
_RECORD_ID = {"anyOf": [_RECORD_NUMBER, {"type": "string", "pattern": "^0{0,2}[1-9][0-9]{0,17}$"}]}
_RECORDS = {"type": "array", "maxItems": CUSTOM_DATA_RECORDS_MAX_BATCH, "items": {
    "description": "a record of the definition's fields (PUT: with its id); each is checked"
                   " on its own: an invalid one is rejected in rejected_items"}}


def _writable(shop: Shop, id_definition: int) -> Doc:
    definition = find_definition(shop, id_definition)
    if not definition["active"]:
        raise ApiError(
            400,
            f"Custom data definition {id_definition} ('{definition['name']}') is deactivated:"
            " activate it before writing its records",
        )
    return definition


async def _write(request: Request, shop: Shop, id_definition: int, *, update: bool) -> Any:
    definition = _writable(shop, id_definition)
    batch = await read_batch(
        request, what="custom data records", max_batch=CUSTOM_DATA_RECORDS_MAX_BATCH
    )
    records = records_of(shop, id_definition)

    def check(index: int, raw: Any) -> tuple[Doc | None, list[str]]:
        extra = ("id",) if update else ()
        values, errors = check_record(definition, raw, partial=update, allowed_extra=extra)
        target = None
        if update and isinstance(raw, dict):
            target = record_id(raw.get("id"))
            if target is None:
                errors.insert(0, "id: is required: the positive integer id of the record")
            elif str(target) not in records:
                errors.insert(0, f"id: no record with id {target} exists to update (use POST)")
        if errors:
            return None, errors
        op = {"kind": "custom_data.save", "definition": id_definition, "id": target,
              "values": values}
        return op, []

    return accept_batch(request, shop, "custom_data_records", batch, check)


@applier("custom_data.save")
def _apply_save(shop: Shop, op: Doc) -> None:
    definition = definitions(shop).get(str(op["definition"]))
    if definition is None:
        return  # the definition was deleted while the write waited
    records = records_of(shop, op["definition"])
    contacts, customers = shop.collection("contacts").docs, shop.collection("customers").values()
    values = resolve_relations(definition, op["values"], contacts, customers)
    existing: Doc | None = None
    if op["id"] is not None:
        existing = records.get(str(op["id"]))
        if existing is None:
            return  # deleted meanwhile
    elif keys := definition["unique_keys"]:
        existing = next(
            (r for r in records.values() if all(r.get(k) == values.get(k) for k in keys)), None
        )
    now = now_iso()
    if existing is None:
        doc = {"id": shop.next_id(records.name), **values, "_created_at": now}
    else:
        doc = {**existing, **values}
    doc["_updated_at"] = now
    records.put(str(doc["id"]), doc)


@applier("custom_data.delete")
def _apply_delete(shop: Shop, op: Doc) -> None:
    records = records_of(shop, op["definition"])
    for target in op["ids"]:
        records.delete(str(target))


@router.get(RECORDS_PATH, summary="listCustomDataRecords",
            **documented(page(Record), query=listing_query("Record", None), sends=[404]))
async def list_records(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    """Selectable fields: ``id`` and the definition's fields; ordered by id by default."""
    definition = find_definition(the_shop, id_definition)
    q = parse_list_query(query(request), record_fields(definition))
    views = (record_view(definition, d) for d in records_of(the_shop, id_definition).values())
    page, total = await listed(request, views, q, default_order=BY_ID)
    return list_envelope(page, total, q)


_MAX = f"a JSON array of at most {CUSTOM_DATA_RECORDS_MAX_BATCH} records"


@router.post(RECORDS_PATH, summary=f"saveCustomDataRecords ({_MAX})",
             **documented(BulkResult, body=_RECORDS, sends=[404]))
async def save_records(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    return await _write(request, the_shop, id_definition, update=False)


@router.put(RECORDS_PATH, summary=f"updateCustomDataRecords ({_MAX}, each with its id)",
            **documented(BulkResult, body=_RECORDS, sends=[404]))
async def update_records(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    return await _write(request, the_shop, id_definition, update=True)


@router.patch(RECORDS_PATH + "/{id}", summary="updateCustomDataRecord",
              **documented(Done, body={"type": "object"}, sends=[404]))
async def update_record(
    id_definition: int, id: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    definition = _writable(the_shop, id_definition)
    body = await json_object(request)
    if str(id) not in records_of(the_shop, id_definition):
        raise not_found(f"Custom data record {id} of definition {id_definition}")
    if "id" in body and record_id(body["id"]) != id:
        raise ApiError(400, f"id: is {body['id']!r} but the path is for record {id}")
    values, errors = check_record(definition, body, partial=True, allowed_extra=("id",))
    if errors:
        raise ApiError(400, errors)
    op = {"kind": "custom_data.save", "definition": id_definition, "id": id, "values": values}
    the_shop.enqueue(op, store_of(request).visible_at())
    return DONE


@router.delete(RECORDS_PATH, summary="deleteCustomDataRecord (?id=)",
               **documented(Done, query=[parameter("id", _RECORD_NUMBER, "The record.",
                                                   required=True)], sends=[404]))
async def delete_record(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    """Idempotent: an unknown record id is not an error."""
    _writable(the_shop, id_definition)
    target = record_id(query(request).get("id"))
    if target is None:
        raise ApiError(400, "id: query parameter is required: the positive integer record id")
    op = {"kind": "custom_data.delete", "definition": id_definition, "ids": [target]}
    the_shop.enqueue(op, store_of(request).visible_at())
    return DONE


@router.post(RECORDS_PATH + "/bulk-delete",
             summary="bulkDeleteCustomDataRecords (a plain JSON array of record ids)",
             **documented(BulkResult, body={"type": "array", "maxItems": MAX_DELETE_IDS,
                                            "items": _RECORD_ID}, sends=[404]))
async def bulk_delete_records(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    """Idempotent: unknown record ids are not an error."""
    _writable(the_shop, id_definition)
    body = await json_body(request)
    ids = [record_id(i) for i in body] if isinstance(body, list) else None
    if ids is None or None in ids:
        raise ApiError(400, "The body must be a plain JSON array of positive integer record ids")
    if len(ids) > MAX_DELETE_IDS:
        raise ApiError(400, f"A bulk delete takes at most {MAX_DELETE_IDS} ids; got {len(ids)}."
                            " Split it into smaller requests.")
    op = {"kind": "custom_data.delete", "definition": id_definition, "ids": ids}
    the_shop.enqueue(op, store_of(request).visible_at())
    return bulk_envelope(len(ids))
