"""Custom events: event types (CRUD), firing them, and the history of firings.

The rules of schemas and payloads live in ``event_rules``; this module stores and answers.
Choices where the spec says "not shown":

* updateEvent is ``PATCH /v1/events`` with ``id_event`` in the body; given keys replace the
  current ones, ``properties`` as a whole. A new ``code_name`` is the trigger path at once.
* A ``code_name`` already used by another event of the shop is a 409.
* triggerEvent answers ``{statusCode: 200, success: true, data: {id_event_history, queued:
  true}}``. Every valid firing is recorded, found target or not; invalid ones are not.
* A history row's ``execution_status`` is ``triggered`` when the contact was found and
  ``target_not_found`` otherwise (always for visitors: the sandbox has no visitor data).
  The contact is resolved by ``id`` (id_shop_contact), then ``email`` (case-insensitive),
  then ``phone`` (contact_data_sms); the first identifier that finds one wins.
* Histories outlive their event type, so a deleted event's firings stay readable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from sandbox.marketing.answers import Answer, Done, Moment, page, projected, single
from sandbox.marketing.errors import ApiError, not_found
from sandbox.marketing.event_rules import (
    EventIn,
    EventPatch,
    EventProperties,
    Target,
    check_trigger,
    parse_event,
    target_of,
)
from sandbox.marketing.http import json_object, listed, ok, query, shop
from sandbox.marketing.listing import list_envelope
from sandbox.marketing.listing_openapi import Language
from sandbox.marketing.listing_parse import ListQuery, parse_event_settings
from sandbox.marketing.openapi import NOT_SPACE, documented, omittable
from sandbox.marketing.spec.query import OrderBy
from sandbox.marketing.store import Doc, Shop, now_iso

router = APIRouter(tags=["events"])

EVENTS = "events"
HISTORIES = "event_histories"
TRIGGERED = "triggered"
TARGET_NOT_FOUND = "target_not_found"

EVENT_FIELDS = ("id_event", "name", "code_name", "properties", "created_at", "updated_at")
HISTORY_FIELDS = (
    "id_event_history", "id_event", "code_name", "target", "id_shop_contact", "payload",
    "execution_status", "date_creation",
)
BY_CREATION = [OrderBy(field="created_at", type="asc"), OrderBy(field="id_event", type="asc")]
NEWEST_FIRST = [
    OrderBy(field="date_creation", type="desc"),
    OrderBy(field="id_event_history", type="desc"),
]


class Event(Answer):
    """An event type: the schema of its payloads (all four slots, normalised)."""

    id_event: int
    name: str
    code_name: str
    properties: EventProperties
    created_at: Moment
    updated_at: Moment


class TargetDoc(Answer):
    """Whom a firing is about, as its payload identified them."""

    type: Literal["contact", "visitor"]
    id: int | str | None = None
    email: str | None = None
    phone: str | None = None


class History(Answer):
    """One firing of an event."""

    id_event_history: int
    id_event: int
    code_name: str
    target: TargetDoc
    id_shop_contact: int | None
    payload: str = Field(description="the payload as it was sent, JSON text")
    execution_status: Literal["triggered", "target_not_found"]
    date_creation: Moment


class Queued(Answer):
    id_event_history: int
    queued: Literal[True]


class Triggered(Answer):
    """The firing is recorded and queued."""

    statusCode: Literal[200]
    success: Literal[True]
    data: Queued


Text = Annotated[StrictStr, Field(pattern=NOT_SPACE)]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContactTarget(_Payload):
    """At least one of id, email, phone."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["id"]}, {"required": ["email"]}, {"required": ["phone"]}]})

    id: StrictInt | Text = omittable()
    email: Text = omittable()
    phone: Text = omittable()
    customData: dict[str, Any] = omittable()


class VisitorTarget(_Payload):
    id: StrictInt | Text
    customData: dict[str, Any] = omittable()


class TriggerPayload(_Payload):
    """A firing: its slots must match what the event type declares (every violation is
    told at once); contact, visitor or both."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["contact"]}, {"required": ["visitor"]}]})

    metaData: dict[str, Any] = omittable()
    customData: dict[str, Any] = omittable()
    contact: ContactTarget = omittable()
    visitor: VisitorTarget = omittable()


def _by_code_name(shop: Shop, code_name: str) -> Doc | None:
    return next((e for e in shop.collection(EVENTS).values() if e["code_name"] == code_name), None)


def _ensure_free(shop: Shop, code_name: str, id_event: int | None = None) -> None:
    taken = _by_code_name(shop, code_name)
    if taken is not None and taken["id_event"] != id_event:
        raise ApiError(
            409, f"code_name {code_name!r} is already used by event {taken['id_event']}"
        )


def _event(shop: Shop, id_event: int) -> Doc:
    found = shop.collection(EVENTS).get(str(id_event))
    if found is None:
        raise not_found(f"Event {id_event}")
    return found


async def _listing(
    request: Request, records: list[Doc], allowed: tuple[str, ...], default: list[OrderBy]
) -> dict[str, Any]:
    params = query(request)
    q = parse_event_settings(params.get("settings"), params.get("fields"), allowed)
    if q.order and all(o.field != default[-1].field for o in q.order):
        # ties (same millisecond) fall back to the order of the ids, in the first direction
        q = ListQuery(
            limit=q.limit, offset=q.offset, fields=q.fields, filters=q.filters,
            order=[*q.order, OrderBy(field=default[-1].field, type=q.order[0].type)],
        )
    page, total = await listed(request, records, q, default_order=default)
    return list_envelope(page, total, q)


@router.get("/v1/events/histories", summary="listEventHistories",
            **documented(page(projected(History)),
                         query=Language("History", HISTORY_FIELDS).event_query()))
async def list_event_histories(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Firings, newest first unless ``settings.order`` says otherwise."""
    rows = list(the_shop.collection(HISTORIES).values())
    return await _listing(request, rows, HISTORY_FIELDS, NEWEST_FIRST)


@router.get("/v1/events", summary="listEvents",
            **documented(page(projected(Event)),
                         query=Language("Event", EVENT_FIELDS).event_query()))
async def list_events(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Event types, oldest first unless ``settings.order`` says otherwise."""
    events = list(the_shop.collection(EVENTS).values())
    return await _listing(request, events, EVENT_FIELDS, BY_CREATION)


@router.post("/v1/events", summary="createEvent",
             **documented(single(Event), body=EventIn, sends=[409]))
async def create_event(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    body, problems = parse_event(EventIn, await json_object(request))
    if body is None:
        raise ApiError(400, problems)
    _ensure_free(the_shop, body.code_name)
    now = now_iso()
    doc = {
        "id_event": the_shop.next_id(EVENTS),
        "name": body.name,
        "code_name": body.code_name,
        "properties": body.properties.normalised(),
        "created_at": now,
        "updated_at": now,
    }
    the_shop.collection(EVENTS).put(str(doc["id_event"]), doc)
    return ok(doc)


@router.patch("/v1/events", summary="updateEvent",
              **documented(single(Event), body=EventPatch, sends=[404, 409]))
async def update_event(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    patch, problems = parse_event(EventPatch, await json_object(request))
    if patch is None:
        raise ApiError(400, problems)
    doc = dict(_event(the_shop, patch.id_event))
    if patch.code_name is not None:
        _ensure_free(the_shop, patch.code_name, patch.id_event)
        doc["code_name"] = patch.code_name
    if patch.name is not None:
        doc["name"] = patch.name
    if patch.properties is not None:
        doc["properties"] = patch.properties.normalised()
    doc["updated_at"] = now_iso()
    the_shop.collection(EVENTS).put(str(doc["id_event"]), doc)
    return ok(doc)


@router.get("/v1/events/{id_event}", summary="getEvent",
            **documented(single(Event), sends=[404]))
async def get_event(id_event: int, the_shop: Shop = Depends(shop)) -> Any:
    return ok(_event(the_shop, id_event))


@router.delete("/v1/events/{id_event}", summary="deleteEvent", **documented(Done))
async def delete_event(id_event: int, the_shop: Shop = Depends(shop)) -> Any:
    """Idempotent: deleting an unknown event succeeds. Its firings stay in the history."""
    the_shop.collection(EVENTS).delete(str(id_event))
    return {"statusCode": 200, "success": True}


def _resolve(shop: Shop, target: Target) -> int | None:
    """The id_shop_contact of a contact target, or None (visitors are never known here)."""
    if target.type != "contact":
        return None
    contacts = list(shop.collection("contacts").values())
    wanted = [
        ("id_shop_contact", None if target.id is None else str(target.id)),
        ("contact_data_email", None if target.email is None else target.email.lower()),
        ("contact_data_sms", target.phone),
    ]
    for field, value in wanted:
        if value is None:
            continue
        for contact in contacts:
            stored = contact.get(field)
            if stored is not None and str(stored).lower() == value.lower():
                return contact["id_shop_contact"]
    return None


@router.post("/v1/events/trigger/{code_name}", summary="triggerEvent",
             **documented(Triggered, body=TriggerPayload, sends=[404]))
async def trigger_event(code_name: str, request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Validate strictly (every violation in one 400), record the firing, answer queued."""
    event = _by_code_name(the_shop, code_name)
    if event is None:
        raise not_found(f"Event with code_name {code_name!r}")
    payload = await json_object(request)
    problems = check_trigger(event["properties"], payload)
    if problems:
        raise ApiError(400, problems)
    target = target_of(payload)
    id_shop_contact = _resolve(the_shop, target)
    row = {
        "id_event_history": the_shop.next_id(HISTORIES),
        "id_event": event["id_event"],
        "code_name": event["code_name"],
        "target": target.as_doc(),
        "id_shop_contact": id_shop_contact,
        "payload": orjson.dumps(payload).decode(),
        "execution_status": TARGET_NOT_FOUND if id_shop_contact is None else TRIGGERED,
        "date_creation": now_iso(),
    }
    the_shop.collection(HISTORIES).put(str(row["id_event_history"]), row)
    return {
        "statusCode": 200,
        "success": True,
        "data": {"id_event_history": row["id_event_history"], "queued": True},
    }
