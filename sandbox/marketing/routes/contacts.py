"""Contacts (derived from customers), their consent history and message rejects, and lists
and segments of contacts.

A list's or segment's members are the contacts matching its ``segmentation_config`` (the
listing language: ``{"filters": [...], "orFilters": [...]}``). With ``keep_updated`` the
membership follows the contacts as they change; without it, it is the snapshot taken when
the configuration was last set.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, WithJsonSchema

from sandbox.marketing.answers import Answer, Done, Moment, page, projected, row, single
from sandbox.marketing.errors import ApiError, not_found, validated
from sandbox.marketing.http import json_object, listed, ok, query, shop
from sandbox.marketing.listing import list_envelope, record_filter
from sandbox.marketing.listing_openapi import Language, listing_query
from sandbox.marketing.listing_parse import parse_list_query
from sandbox.marketing.openapi import documented, omittable, parameter
from sandbox.marketing.routes.custom_data import Definition
from sandbox.marketing.spec.query import OrderBy
from sandbox.marketing.store import Doc, Shop, now_iso
from sandbox.marketing.views import CONTACT_FIELDS, contact_view

router = APIRouter(tags=["contacts"])

LIST_FIELDS = (
    "id_list", "name", "type", "keep_updated", "segmentation_config", "nb_contacts",
    "created_at", "updated_at",
)
MEMBER_FIELDS = (*CONTACT_FIELDS, "membership_date")
CONSENT_FIELDS = (
    "id", "id_shop_contact", "contact_data_email", "channel", "consent", "source", "created_at",
)
REJECT_FIELDS = ("id", "id_shop_contact", "channel", "reason", "created_at")

#: what the sandbox keeps of a contact (``contacts.derive_contact``); the rest read as null
_CONTACT_TYPES: dict[str, Any] = {
    "id_shop_contact": int, "id_customer_shop": str, "id_shop_customer": int,
    "contact_data_email": str, "contact_data_sms": str, "contact_first_name": str,
    "contact_last_name": str, "contact_birthday": str, "contact_lang": str,
    "optin_data_email": bool, "optin_data_sms": bool, "can_receive_email": bool,
    "can_receive_sms": bool, "can_receive_push": bool, "is_billable": bool,
    "do_not_charge": bool, "is_registered": bool, "active": bool, "created_on_shop_at": str,
    "created_at": Moment, "updated_at": Moment,
}
Contact = row("Contact", {f: _CONTACT_TYPES.get(f) for f in CONTACT_FIELDS},
              "A contact (the fields the sandbox does not keep read as null).")
Member = row("Member", {f: {**_CONTACT_TYPES, "membership_date": Moment}.get(f)
                        for f in MEMBER_FIELDS}, "A contact of a list, since membership_date.")


class ContactList(Answer):
    """A list or segment of contacts."""

    id_list: int
    name: str
    type: Literal["list", "segment"]
    keep_updated: bool
    segmentation_config: dict[str, Any] | None
    nb_contacts: int
    created_at: Moment
    updated_at: Moment


class Consent(Answer):
    """A change of a contact's email opt-in."""

    id: int
    id_shop_contact: int
    contact_data_email: str
    channel: Literal["email"]
    consent: bool
    source: str
    created_at: Moment


class Reject(Answer):
    """A message a contact's provider rejected (the sandbox sends none)."""

    id: int
    id_shop_contact: int
    channel: str
    reason: str
    created_at: Moment


class Tags(Answer):
    """A contact's tags: set in the dashboard, which the sandbox does not have."""

    statusCode: Literal[200]
    data: list[str] = Field(max_length=0)


_BY_CONTACT = [
    parameter(key, {"type": "string"}, "Give exactly one of id_shop_contact, id_customer_shop,"
              " contact_data_email (compared without case).")
    for key in ("id_shop_contact", "id_customer_shop", "contact_data_email")
]


async def _listing(
    request: Request,
    records: Any,
    allowed: tuple[str, ...],
    default_order: list[OrderBy],
) -> dict[str, Any]:
    q = parse_list_query(query(request), allowed)
    page, total = await listed(request, records, q, default_order=default_order)
    return list_envelope(page, total, q)


@router.get("/v1/contacts/all", summary="listContacts",
            **documented(page(Contact), query=listing_query("Contact", CONTACT_FIELDS)))
async def list_contacts(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Contacts derived from pushed customers, one per email, by creation date."""
    views = (contact_view(c) for c in the_shop.collection("contacts").values())
    return await _listing(request, views, CONTACT_FIELDS, [OrderBy(field="id_shop_contact", type="asc")])


def _contact(the_shop: Shop, field: str, value: Any) -> Doc:
    for contact in the_shop.collection("contacts").docs.values():
        stored = contact.get(field)
        if stored is not None and str(stored).lower() == str(value).lower():
            return contact
    raise not_found(f"Contact with {field} {value!r}")


@router.get("/v1/contacts", summary="getContact",
            **documented(single(Contact), query=_BY_CONTACT, sends=[404]))
async def get_contact(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """One contact by exactly one of id_shop_contact, id_customer_shop, contact_data_email."""
    params = query(request)
    keys = ("id_shop_contact", "id_customer_shop", "contact_data_email")
    given = {k: params[k] for k in keys if k in params}
    if len(given) != 1:
        raise ApiError(400, f"Give exactly one of {', '.join(keys)} as a query parameter")
    ((field, value),) = given.items()
    return ok(contact_view(_contact(the_shop, field, value)))


@router.get("/v1/contacts/{id_shop_contact}/lists", summary="getContactLists",
            **documented(single(ContactList, many=True), sends=[404]))
async def get_contact_lists(id_shop_contact: int, the_shop: Shop = Depends(shop)) -> Any:
    contact = _contact(the_shop, "id_shop_contact", id_shop_contact)
    lists = [
        _list_view(the_shop, doc)
        for doc in the_shop.collection("lists").docs.values()
        if any(m["id_shop_contact"] == contact["id_shop_contact"] for m in _members(the_shop, doc))
    ]
    return ok(lists)


@router.get("/v1/contacts/{id_shop_contact}/tags", summary="getContactTags",
            **documented(Tags, sends=[404]))
async def get_contact_tags(id_shop_contact: int, the_shop: Shop = Depends(shop)) -> Any:
    """Tags are set in the dashboard, which the sandbox does not have: always none."""
    _contact(the_shop, "id_shop_contact", id_shop_contact)
    return ok([])


@router.get(
    "/v1/contacts/{id_shop_contact}/custom-data-definitions",
    summary="getContactCustomDataDefinitions",
    **documented(single(Definition, many=True), sends=[404]),
)
async def get_contact_definitions(id_shop_contact: int, the_shop: Shop = Depends(shop)) -> Any:
    """Custom data definitions related to contacts (a relationship targeting them)."""
    _contact(the_shop, "id_shop_contact", id_shop_contact)
    related = [
        {k: v for k, v in d.items() if not k.startswith("_")}
        for d in the_shop.collection("custom_data_definitions").docs.values()
        if any(
            str(r.get("targetSchema", "")).startswith("contact")
            for r in d.get("relationships") or []
        )
    ]
    return ok(related)


@router.get("/v1/contact-consent-history", summary="listContactConsentHistory",
            **documented(page(projected(Consent)), query=listing_query("Consent", CONSENT_FIELDS)))
async def list_consent_history(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """Every change of a contact's email opt-in, as customers were pushed."""
    rows = the_shop.collection("consent_history").values()
    return await _listing(request, rows, CONSENT_FIELDS, [OrderBy(field="id", type="asc")])


@router.get("/v1/contact-messages-reject", summary="listContactMessagesReject",
            **documented(page(projected(Reject)), query=listing_query("Reject", REJECT_FIELDS)))
async def list_messages_reject(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    """The sandbox sends no messages, so nothing is ever rejected: always an empty list."""
    return await _listing(request, [], REJECT_FIELDS, [OrderBy(field="id", type="asc")])


class ListIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    type: Literal["list", "segment"] = "list"


class ListPatch(BaseModel):
    """The keys given replace the current ones; name and keep_updated cannot be null."""

    model_config = ConfigDict(extra="forbid")

    name: str = omittable()
    segmentation_config: Annotated[
        dict[str, Any] | None,
        WithJsonSchema({"anyOf": [Language("Contact", CONTACT_FIELDS).segmentation(),
                                  {"type": "null"}]}),
    ] = None
    keep_updated: StrictBool = omittable()


def _segment_filter(config: dict[str, Any] | None) -> Any:
    """The predicate of a segmentation config; a 400 naming the problem when it is invalid."""
    if not config:
        return lambda contact: False
    unknown = set(config) - {"filters", "orFilters"}
    if unknown:
        raise ApiError(
            400, f"segmentation_config: unknown keys {sorted(unknown)}; use filters, orFilters"
        )
    q = parse_list_query(config, CONTACT_FIELDS)
    return record_filter(q)


def _snapshot(the_shop: Shop, config: dict[str, Any] | None) -> list[Doc]:
    matches = _segment_filter(config)
    now = now_iso()
    return [
        {"id_shop_contact": c["id_shop_contact"], "membership_date": now}
        for c in map(contact_view, the_shop.collection("contacts").docs.values())
        if matches(c)
    ]


def _members(the_shop: Shop, doc: Doc) -> list[Doc]:
    if not doc.get("keep_updated"):
        return doc.get("_members", [])
    since = doc["updated_at"]
    matches = _segment_filter(doc.get("segmentation_config"))
    return [
        {"id_shop_contact": c["id_shop_contact"], "membership_date": max(since, c["updated_at"])}
        for c in map(contact_view, the_shop.collection("contacts").docs.values())
        if matches(c)
    ]


def _list_view(the_shop: Shop, doc: Doc) -> dict[str, Any]:
    view = {k: v for k, v in doc.items() if not k.startswith("_")}
    view["nb_contacts"] = len(_members(the_shop, doc))
    return view


def _get_list(the_shop: Shop, id_list: int) -> Doc:
    doc = the_shop.collection("lists").get(str(id_list))
    if doc is None:
        raise not_found(f"List {id_list}")
    return doc


@router.get("/v1/lists", tags=["lists"], summary="listLists",
            **documented(page(projected(ContactList)),
                         query=listing_query("ContactList", LIST_FIELDS)))
async def list_lists(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    views = [_list_view(the_shop, d) for d in the_shop.collection("lists").docs.values()]
    return await _listing(request, views, LIST_FIELDS, [OrderBy(field="id_list", type="asc")])


@router.post("/v1/lists", tags=["lists"], summary="createList",
             **documented(single(ContactList), body=ListIn))
async def create_list(request: Request, the_shop: Shop = Depends(shop)) -> Any:
    body = validated(ListIn, await json_object(request))
    now = now_iso()
    doc = {
        "id_list": the_shop.next_id("lists"),
        "name": body.name,
        "type": body.type,
        "keep_updated": body.type == "segment",
        "segmentation_config": None,
        "created_at": now,
        "updated_at": now,
        "_members": [],
    }
    the_shop.collection("lists").put(str(doc["id_list"]), doc)
    return ok(_list_view(the_shop, doc))


@router.get("/v1/lists/{id_list}", tags=["lists"], summary="getList",
            **documented(single(ContactList), sends=[404]))
async def get_list(id_list: int, the_shop: Shop = Depends(shop)) -> Any:
    return ok(_list_view(the_shop, _get_list(the_shop, id_list)))


@router.patch("/v1/lists/{id_list}", tags=["lists"], summary="updateList",
              **documented(single(ContactList), body=ListPatch, sends=[404]))
async def update_list(id_list: int, request: Request, the_shop: Shop = Depends(shop)) -> Any:
    patch = validated(ListPatch, await json_object(request))
    doc = {**_get_list(the_shop, id_list), **patch.model_dump(exclude_unset=True)}
    doc["updated_at"] = now_iso()
    doc["_members"] = _snapshot(the_shop, doc.get("segmentation_config"))
    the_shop.collection("lists").put(str(id_list), doc)
    return ok(_list_view(the_shop, doc))


@router.delete("/v1/lists/{id_list}", tags=["lists"], summary="deleteList",
               **documented(Done))
async def delete_list(id_list: int, the_shop: Shop = Depends(shop)) -> Any:
    """Idempotent: deleting an unknown list succeeds."""
    the_shop.collection("lists").delete(str(id_list))
    return {"statusCode": 200, "success": True}


@router.get("/v1/lists/{id_list}/contacts", tags=["lists"], summary="listListContacts",
            **documented(page(Member), query=listing_query("Member", MEMBER_FIELDS), sends=[404]))
async def list_list_contacts(
    id_list: int, request: Request, the_shop: Shop = Depends(shop)
) -> Any:
    """Contacts currently in the list or segment, by membership date."""
    members = _members(the_shop, _get_list(the_shop, id_list))
    contacts = {c["id_shop_contact"]: c for c in the_shop.collection("contacts").docs.values()}
    rows = [
        {**contact_view(contacts[m["id_shop_contact"]]), "membership_date": m["membership_date"]}
        for m in members
        if m["id_shop_contact"] in contacts
    ]
    order = [OrderBy(field="membership_date", type="asc"), OrderBy(field="id_shop_contact", type="asc")]
    return await _listing(request, rows, MEMBER_FIELDS, order)
