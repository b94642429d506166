"""Custom data definitions (typed schemas) and field override priorities: configuration,
written at once, the response carrying the result. Their records are
``routes/custom_data_records.py``'s.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError

from sandbox.marketing.answers import (
    Answer,
    Done,
    Moment,
    page,
    projected,
    single,
)
from sandbox.marketing.custom_fields import (
    MAX_OVERRIDES_PER_FIELD,
    DefinitionIn,
    ExtendIn,
    FieldDef,
    OverridesIn,
    Relationship,
)
from sandbox.marketing.errors import ApiError, describe_validation_error, not_found, validated
from sandbox.marketing.http import json_object, listed, ok, query, shop
from sandbox.marketing.listing import list_envelope
from sandbox.marketing.listing_openapi import listing_query
from sandbox.marketing.listing_parse import parse_list_query
from sandbox.marketing.openapi import documented, parameter
from sandbox.marketing.spec.query import OrderBy
from sandbox.marketing.store import Collection, Doc, Shop, now_iso

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
