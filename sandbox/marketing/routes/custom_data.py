"""Custom data: definitions (typed schemas), field override priorities, and records.

Definitions and overrides are configuration: they are written at once and the response
carries the result. Record writes are data, asynchronous like sync writes: each item of a
batch is checked on its own against its definition (see ``custom_fields``), accepted items
go through the shop's pending queue and become readable after the visibility delay.

Save semantics of ``POST custom-data-records/{id_definition}``: when the definition has
``unique_keys``, an item whose unique-key values match an existing record updates that record
(the fields it carries; the others keep their values), else it is inserted with a new
auto-increment ``id``. ``PUT`` (items carry ``id``) and ``PATCH`` update by id and do not
re-check unique keys. Writes to a deactivated definition are refused with 400, reads work.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ConfigDict, ValidationError

from sandbox.marketing.answers import (
    Answer,
    BulkResult,
    Done,
    Moment,
    page,
    projected,
    single,
)
from sandbox.marketing.bulk import accept_batch, bulk_envelope, read_batch
from sandbox.marketing.custom_fields import (
    MAX_OVERRIDES_PER_FIELD,
    DefinitionIn,
    ExtendIn,
    FieldDef,
    OverridesIn,
    Relationship,
    check_record,
    record_id,
    resolve_relations,
)
from sandbox.marketing.errors import ApiError, describe_validation_error, not_found, validated
from sandbox.marketing.http import json_body, json_object, listed, ok, query, shop, store_of
from sandbox.marketing.limits import MAX_DELETE_IDS, MAX_INT
from sandbox.marketing.listing import list_envelope, parse_list_query
from sandbox.marketing.listing_openapi import listing_query
from sandbox.marketing.openapi import documented, parameter
from sandbox.marketing.spec.query import OrderBy
from sandbox.marketing.spec.resources import (
    CUSTOM_DATA_RECORDS_MAX_BATCH,
    CUSTOM_DATA_RECORDS_ROUTE,
)
from sandbox.marketing.store import Collection, Doc, Shop, applier, now_iso

router = APIRouter(tags=["custom data"])

DEFINITIONS = "custom_data_definitions"
OVERRIDES = "custom_data_overrides"
DEFINITION_FIELDS = (
    "id", "id_shop", "name", "description", "unique_keys", "fields", "relationships", "active",
    "created_at", "updated_at",
)
OVERRIDE_FIELDS = (
    "id", "id_custom_data_definition", "custom_field_name", "target_schema", "system_field",
    "priority",
)
BY_ID = [OrderBy(field="id", type="asc")]
DEFS_PATH = "/v1/custom-data-definitions"
RECORDS_PATH = "/v1/" + CUSTOM_DATA_RECORDS_ROUTE
DONE = {"statusCode": 200, "success": True}


class Definition(Answer):
    """A custom data definition."""

    id: int
    id_shop: int
    name: str
    description: str | None
    unique_keys: list[str]
    fields: list[FieldDef]
    relationships: list[Relationship]
    active: bool
    created_at: Moment
    updated_at: Moment


class Override(Answer):
    """Where a custom field stands among those overriding one system field."""

    id: int
    id_custom_data_definition: int
    custom_field_name: str
    target_schema: str
    system_field: str
    priority: int


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
_PAIR = [parameter(key, {"type": "string", "minLength": 1}, "The system field overridden.",
                   required=True)
         for key in ("target_system_schema", "system_field_name")]


# --- definitions ---------------------------------------------------------------------------


def definitions(shop: Shop) -> Collection:
    return shop.collection(DEFINITIONS)


def find_definition(shop: Shop, id_definition: int) -> Doc:
    found = definitions(shop).get(str(id_definition))
    if found is None:
        raise not_found(f"Custom data definition {id_definition}")
    return found


def definition_named(shop: Shop, name: str) -> Doc | None:
    """The definition called ``name`` (names are unique per shop, case-insensitively)."""
    return next((d for d in definitions(shop).values() if d["name"].lower() == name.lower()), None)


def records_of(shop: Shop, id_definition: int) -> Collection:
    return shop.collection(f"custom_data_records:{id_definition}")


def record_fields(definition: Doc) -> tuple[str, ...]:
    """What a record listing may select, filter and order by."""
    return ("id", *(f["name"] for f in definition["fields"]))


def record_view(definition: Doc, doc: Doc) -> dict[str, Any]:
    return {name: doc.get(name) for name in record_fields(definition)}


@router.get(DEFS_PATH, summary="listCustomDataDefinitions",
            **documented(page(projected(Definition)),
                         query=listing_query("Definition", DEFINITION_FIELDS)))
async def list_definitions(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    q = parse_list_query(query(request), DEFINITION_FIELDS)
    page, total = await listed(request, definitions(the_shop).values(), q, default_order=BY_ID)
    return list_envelope(page, total, q)


@router.post(DEFS_PATH, summary="createCustomDataDefinition",
             **documented(single(Definition), body=DefinitionIn))
async def create_definition(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Names are unique per shop: KPI sources and relationships refer to definitions by name."""
    body = validated(DefinitionIn, await json_object(request))
    clash = definition_named(the_shop, body.name)
    if clash is not None:
        raise ApiError(
            400, f"name: a custom data definition named '{clash['name']}' exists (id {clash['id']})"
        )
    now = now_iso()
    doc = {
        "id": the_shop.next_id(DEFINITIONS),
        "id_shop": the_shop.shop_id,
        **body.model_dump(),
        "active": True,
        "created_at": now,
        "updated_at": now,
    }
    definitions(the_shop).put(str(doc["id"]), doc)
    return ok(doc)


# --- field override priorities (declared before `/{id_definition}` so it is not taken) -----


@router.get(f"{DEFS_PATH}/overrides", summary="listFieldOverridePriorities",
            **documented(page(projected(Override)),
                         query=listing_query("Override", OVERRIDE_FIELDS)))
async def list_overrides(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    q = parse_list_query(query(request), OVERRIDE_FIELDS)
    rows = the_shop.collection(OVERRIDES).values()
    page, total = await listed(request, rows, q, default_order=BY_ID)
    return list_envelope(page, total, q)


@router.put(f"{DEFS_PATH}/overrides", summary="updateFieldOverridePriorities",
            **documented(single(Override, many=True), body=OverridesIn, query=_PAIR))
async def put_overrides(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Replace every override of one (target_system_schema, system_field_name) pair; an empty
    ``overrides`` array clears the pair. Answers the pair's rows, highest priority first."""
    params = query(request)
    pair = {k: params.get(k) for k in ("target_system_schema", "system_field_name")}
    problems = [f"{k}: query parameter is required" for k, v in pair.items()
                if not isinstance(v, str) or not v]
    try:
        given = OverridesIn.model_validate(await json_object(request)).overrides
    except ValidationError as exc:
        raise ApiError(400, problems + describe_validation_error(exc)) from None
    if len(given) > MAX_OVERRIDES_PER_FIELD:
        problems.append(
            f"overrides: at most {MAX_OVERRIDES_PER_FIELD} overrides per (target_schema,"
            f" system_field) pair, got {len(given)}"
        )
        raise ApiError(400, problems)
    priorities = [o.priority for o in given]
    for p in sorted({p for p in priorities if priorities.count(p) > 1}):
        problems.append(f"overrides: priority {p} is given twice; priorities must be unique")
    links = [(o.id_custom_data_definition, o.custom_field_name) for o in given]
    for i, (id_def, name) in enumerate(links):
        definition = definitions(the_shop).get(str(id_def))
        if definition is None:
            problems.append(f"overrides[{i}].id_custom_data_definition: {id_def} does not exist")
        elif name not in record_fields(definition)[1:]:
            problems.append(
                f"overrides[{i}].custom_field_name: '{name}' is not a field of definition {id_def}"
            )
        if links.index((id_def, name)) != i:
            problems.append(f"overrides[{i}]: field '{name}' of definition {id_def} is given twice")
    if problems:
        raise ApiError(400, problems)
    collection = the_shop.collection(OVERRIDES)
    target, system_field = pair["target_system_schema"], pair["system_field_name"]
    for row in collection.values():
        if row["target_schema"] == target and row["system_field"] == system_field:
            collection.delete(str(row["id"]))
    rows = []
    for o in sorted(given, key=lambda o: o.priority):
        row = {"id": the_shop.next_id(OVERRIDES), **o.model_dump(),
               "target_schema": target, "system_field": system_field}
        collection.put(str(row["id"]), row)
        rows.append({k: row[k] for k in OVERRIDE_FIELDS})
    return ok(rows)


# --- one definition ------------------------------------------------------------------------


@router.get(DEFS_PATH + "/{id_definition}", summary="getCustomDataDefinition",
            **documented(single(Definition), sends=[404]))
async def get_definition(id_definition: int, the_shop: Shop = Depends(shop)) -> Any:
    return ok(find_definition(the_shop, id_definition))


@router.delete(DEFS_PATH + "/{id_definition}", summary="deleteCustomDataDefinition",
               **documented(Done))
async def delete_definition(id_definition: int, the_shop: Shop = Depends(shop)) -> Any:
    """Idempotent. Takes the definition's records and override rows with it."""
    definitions(the_shop).delete(str(id_definition))
    records = records_of(the_shop, id_definition)
    for key in list(records.docs):
        records.delete(key)
    overrides = the_shop.collection(OVERRIDES)
    for row in overrides.values():
        if row["id_custom_data_definition"] == id_definition:
            overrides.delete(str(row["id"]))
    return DONE


def _touch(shop: Shop, doc: Doc, **changes: Any) -> dict[str, Any]:
    doc = {**doc, **changes, "updated_at": now_iso()}
    definitions(shop).put(str(doc["id"]), doc)
    return ok(doc)


@router.patch(DEFS_PATH + "/{id_definition}/extend", summary="extendCustomDataDefinition",
              **documented(single(Definition), body=ExtendIn, sends=[404]))
async def extend_definition(
    id_definition: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    """Adds fields. An existing field is never redefined: its records would stop matching."""
    body = validated(ExtendIn, await json_object(request))
    doc = find_definition(the_shop, id_definition)
    existing = set(record_fields(doc)[1:])
    names = [f.name for f in body.fields]
    problems = [
        f"fields[{i}].name: '{n}' already exists in definition '{doc['name']}'; a field cannot"
        " be redefined"
        for i, n in enumerate(names) if n in existing
    ]
    first = {n: i for i, n in reversed(list(enumerate(names)))}
    problems += [f"fields[{i}].name: '{n}' is given twice"
                 for i, n in enumerate(names) if first[n] != i]
    if problems:
        raise ApiError(400, problems)
    added = [f.model_dump() for f in body.fields]
    return _touch(the_shop, doc, fields=[*doc["fields"], *added])


@router.patch(DEFS_PATH + "/{id_definition}/activate", summary="activateCustomDataDefinition",
              **documented(single(Definition), sends=[404]))
async def activate_definition(id_definition: int, the_shop: Shop = Depends(shop)) -> Any:
    return _touch(the_shop, find_definition(the_shop, id_definition), active=True)


@router.patch(DEFS_PATH + "/{id_definition}/deactivate",
              summary="deactivateCustomDataDefinition",
              **documented(single(Definition), sends=[404]))
async def deactivate_definition(id_definition: int, the_shop: Shop = Depends(shop)) -> Any:
    """A deactivated definition keeps its records (readable) but refuses writes."""
    return _touch(the_shop, find_definition(the_shop, id_definition), active=False)


# --- records -------------------------------------------------------------------------------


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
