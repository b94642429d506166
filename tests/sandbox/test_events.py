"""Custom events over real HTTP: event types, strict trigger validation, firing histories."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from connectors.marketing.samples import sample_item

EMPTY_SCHEMA = {
    "metaData": [], "customData": [], "contact.customData": [], "visitor.customData": [],
}
CODE_NAME_RULE = (
    "code_name: must be one alphanumeric word (OrderShipped) or two alphanumeric words joined"
    " by one '.' or '_' (Resource.Action or Resource_Action); spaces and special characters"
    " are not allowed"
)
SOMEONE = {"contact": {"email": "nobody@example.com"}}


def field(name: str, type_: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "type": type_, "required": required, "description": None}


def create(api: httpx.Client, code_name: str = "OrderShipped", **body: Any) -> httpx.Response:
    return api.post("/events", json={"name": "Order shipped", "code_name": code_name, **body})


def make_event(api: httpx.Client, code_name: str = "OrderShipped", **body: Any) -> dict[str, Any]:
    answer = create(api, code_name, **body)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def trigger(api: httpx.Client, code_name: str, payload: Any) -> httpx.Response:
    return api.post(f"/events/trigger/{code_name}", json=payload)


def listing(
    api: httpx.Client, path: str, fields: list[str] | None = None, **settings: Any
) -> dict[str, Any]:
    params: list[tuple[str, str]] = [("fields", f) for f in fields or []]
    if settings:
        params.append(("settings", json.dumps(settings)))
    answer = api.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def errors_of(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 400, answer.text
    return answer.json()["errors"]


def in_slot(slot: str, data: Any) -> dict[str, Any]:
    """A valid targeted payload carrying ``data`` in ``slot``."""
    if slot in ("metaData", "customData"):
        return {**SOMEONE, slot: data}
    owner = slot.split(".")[0]
    target = {"id": "v-1"} if owner == "visitor" else {"email": "nobody@example.com"}
    return {owner: {**target, "customData": data}}


# --- event types ---------------------------------------------------------------------------


def test_create_event_answers_the_stored_event_with_all_four_slots(api):
    answer = create(api, properties={"customData": [{"name": "tracking", "type": "text"}]})

    assert answer.status_code == 200
    body = answer.json()
    assert body["statusCode"] == 200
    event = body["data"]
    assert event["id_event"] == 1
    assert (event["name"], event["code_name"]) == ("Order shipped", "OrderShipped")
    assert event["properties"] == {**EMPTY_SCHEMA, "customData": [field("tracking", "text")]}
    assert event["created_at"] == event["updated_at"]
    assert api.get("/events/1").json() == body


def test_an_event_without_properties_has_an_empty_schema(api):
    assert make_event(api)["properties"] == EMPTY_SCHEMA


@pytest.mark.parametrize(
    "properties",
    [
        {"contact.customData": [{"name": "tier", "type": "text", "required": True}],
         "visitor.customData": [{"name": "page", "type": "text"}]},
        {"contact": {"customData": [{"name": "tier", "type": "text", "required": True}]},
         "visitor": {"customData": [{"name": "page", "type": "text"}]}},
    ],
    ids=["flat-dotted-keys", "nested-objects"],
)
def test_target_slots_are_accepted_flat_or_nested_and_stored_flat(api, properties):
    event = make_event(api, properties=properties)

    expected = {
        **EMPTY_SCHEMA,
        "contact.customData": [field("tier", "text", required=True)],
        "visitor.customData": [field("page", "text")],
    }
    assert event["properties"] == expected
    assert api.get(f"/events/{event['id_event']}").json()["data"]["properties"] == expected


def test_a_slot_given_both_flat_and_nested_is_rejected(api):
    answer = create(
        api, properties={"contact.customData": [], "contact": {"customData": []}}
    )

    assert errors_of(answer) == [
        "properties.contact.customData: given both flat and nested; give one form"
    ]


@pytest.mark.parametrize(
    "code_name", ["OrderShipped", "Order.Shipped", "Order_Shipped", "cart2"],
    ids=["one-word", "dot", "underscore", "digits"],
)
def test_valid_code_names_are_accepted(api, code_name):
    assert make_event(api, code_name)["code_name"] == code_name


@pytest.mark.parametrize(
    "code_name",
    ["order shipped", "order-shipped", "a.b.c", "", "é", "Order._Shipped", ".Order", "Order_"],
    ids=["space", "hyphen", "two-dots", "empty", "non-ascii", "two-separators",
         "leading-dot", "trailing-underscore"],
)
def test_invalid_code_names_are_rejected_with_the_rule(api, code_name):
    assert errors_of(create(api, code_name)) == [f"{CODE_NAME_RULE}, got {code_name!r}"]


def test_a_code_name_already_used_in_the_shop_conflicts(api, sandbox, fresh_key):
    make_event(api, "OrderShipped")

    answer = create(api, "OrderShipped")

    assert answer.status_code == 409
    assert "already used by event 1" in answer.json()["message"]
    other_shop = sandbox.client(fresh_key())
    assert create(other_shop, "OrderShipped").status_code == 200


def test_every_problem_of_an_event_body_is_reported_at_once(api):
    answer = api.post("/events", json={
        "name": "",
        "code_name": "bad name",
        "properties": {
            "metaData": [{"name": "a", "type": "string"}],
            "customData": [{"type": "text", "mandatory": True}],
            "visitor.customData": [{"name": "x", "type": "text"}, {"name": "x", "type": "bool"}],
            "orderData": [],
        },
        "colour": "blue",
    })

    errors = errors_of(answer)
    assert errors[0] == "name: String should have at least 1 character"
    assert errors[1].startswith("code_name: must be one alphanumeric word")
    assert errors[2].startswith("properties.metaData[0].type: Input should be 'bool', 'text'")
    assert errors[3:] == [
        "properties.customData[0].name: is required",
        "properties.customData[0].mandatory: Extra inputs are not permitted",
        "properties.visitor.customData: field names must be unique in a slot; repeated: ['x']",
        "properties.orderData: Extra inputs are not permitted",
        "colour: Extra inputs are not permitted",
    ]
    assert answer.json()["message"] == "; ".join(errors)


def test_get_event_of_an_unknown_id_is_404(api):
    answer = api.get("/events/42")

    assert answer.status_code == 404
    assert answer.json()["errors"] == ["Event 42 not found"]


def test_events_are_listed_by_creation_with_settings_and_fields(api):
    for code_name in ("Cart.Abandoned", "OrderShipped", "Cart.Converted"):
        make_event(api, code_name)

    default = listing(api, "/events")
    assert [e["id_event"] for e in default["data"]] == [1, 2, 3]
    assert default["meta"]["pagination"]["total_items"] == 3

    chosen = listing(
        api, "/events", fields=["id_event", "code_name"], limit=1, offset=1,
        order=[{"field": "code_name", "type": "desc"}],
        filter=[{"field": "code_name", "operator": "STARTS_WITH", "values": "Cart"}],
    )
    assert chosen["data"] == [{"id_event": 1, "code_name": "Cart.Abandoned"}]
    assert chosen["meta"]["pagination"]["total_items"] == 2


def test_event_listing_settings_are_validated(api):
    answer = api.get("/events", params={"settings": json.dumps({"filters": []})})

    assert answer.status_code == 400
    assert "allowed keys: limit, offset, order, filter" in answer.json()["message"]


def test_update_event_replaces_the_given_keys(api):
    event = make_event(api, properties={"customData": [{"name": "a", "type": "text"}]})

    answer = api.patch("/events", json={
        "id_event": event["id_event"], "name": "Shipped",
        "properties": {"metaData": [{"name": "source", "type": "text", "required": True}]},
    })

    assert answer.status_code == 200
    updated = answer.json()["data"]
    assert updated["name"] == "Shipped"
    assert updated["code_name"] == "OrderShipped"
    assert updated["properties"] == {**EMPTY_SCHEMA, "metaData": [field("source", "text", True)]}
    assert updated["created_at"] == event["created_at"]
    assert updated["updated_at"] >= event["updated_at"]
    assert api.get(f"/events/{event['id_event']}").json()["data"] == updated


@pytest.mark.parametrize(
    ("patch", "status", "error"),
    [
        ({"id_event": 99, "name": "x"}, 404, "Event 99 not found"),
        ({"id_event": 1, "code_name": "Taken"}, 409,
         "code_name 'Taken' is already used by event 2"),
        ({"id_event": 1, "code_name": "bad name"}, 400, f"{CODE_NAME_RULE}, got 'bad name'"),
        ({"id_event": 1, "name": None}, 400,
         "name: cannot be null; leave the key out to keep the current value"),
        ({"id_event": 1, "enabled": False}, 400, "enabled: Extra inputs are not permitted"),
        ({"name": "x"}, 400, "id_event: is required"),
    ],
    ids=["unknown-id", "code-name-taken", "bad-code-name", "null-name", "unknown-key",
         "no-id"],
)
def test_update_event_rejects(api, patch, status, error):
    make_event(api, "Mine")
    make_event(api, "Taken")

    answer = api.patch("/events", json=patch)

    assert answer.status_code == status
    assert answer.json()["errors"] == [error]


def test_update_may_keep_its_own_code_name(api):
    event = make_event(api, "Mine")

    answer = api.patch("/events", json={"id_event": event["id_event"], "code_name": "Mine"})

    assert answer.status_code == 200


def test_changing_the_code_name_moves_the_trigger_path_at_once(api):
    event = make_event(api, "Order.Shipped")

    api.patch("/events", json={"id_event": event["id_event"], "code_name": "Order.Sent"})

    assert trigger(api, "Order.Shipped", SOMEONE).status_code == 404
    assert trigger(api, "Order.Sent", SOMEONE).status_code == 200
    assert listing(api, "/events/histories")["data"][0]["code_name"] == "Order.Sent"


def test_a_field_added_by_update_can_then_be_sent(api):
    event = make_event(api)
    payload = {**SOMEONE, "customData": {"carrier": "UPS"}}
    assert errors_of(trigger(api, "OrderShipped", payload)) == [
        "Undeclared property: customData.carrier"
    ]

    api.patch("/events", json={
        "id_event": event["id_event"], "properties": {"customData": [field("carrier", "text")]},
    })

    assert trigger(api, "OrderShipped", payload).status_code == 200


def test_delete_event_is_idempotent_and_keeps_the_history(api):
    event = make_event(api)
    trigger(api, "OrderShipped", SOMEONE)

    for _ in range(2):
        answer = api.delete(f"/events/{event['id_event']}")
        assert answer.status_code == 200
        assert answer.json() == {"statusCode": 200, "success": True}
    assert api.delete("/events/999").status_code == 200

    assert api.get(f"/events/{event['id_event']}").status_code == 404
    assert trigger(api, "OrderShipped", SOMEONE).status_code == 404
    assert listing(api, "/events/histories")["meta"]["pagination"]["total_items"] == 1
    assert create(api, "OrderShipped").status_code == 200


def test_histories_route_is_not_taken_for_an_event_id(api):
    body = listing(api, "/events/histories")

    assert body["data"] == []
    assert body["meta"]["pagination"]["total_items"] == 0
    assert api.get("/events/not-a-number").status_code == 400


def test_event_routes_need_a_key(sandbox):
    assert sandbox.client(key=None).get("/events").status_code == 401


# --- trigger validation --------------------------------------------------------------------


def test_triggering_an_unknown_code_name_is_404(api):
    answer = trigger(api, "Nope", SOMEONE)

    assert answer.status_code == 404
    assert answer.json()["errors"] == ["Event with code_name 'Nope' not found"]


@pytest.mark.parametrize(
    ("type_", "value", "got"),
    [
        ("bool", True, None),
        ("bool", "true", "text"),
        ("text", "hello", None),
        ("text", 5, "number"),
        ("longtext", "word " * 500, None),
        ("longtext", False, "bool"),
        ("number", 3, None),
        ("number", 2.5, None),
        ("number", True, "bool"),
        ("number", "3", "text"),
        ("decimal", 9.99, None),
        ("decimal", 10, None),
        ("decimal", "9.99", "text"),
        ("date", "2026-01-15", None),
        ("date", "2026-01-15T10:30:00Z", None),
        ("date", "15/01/2026", "text"),
        ("date", 20260115, "number"),
        ("json", {"a": [1]}, None),
        ("json", [1, 2], None),
        ("json", "{}", "text"),
        ("text", None, "null"),
        ("json", None, "null"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None,
)
def test_declared_types_accept_their_values_and_name_what_they_got(api, type_, value, got):
    make_event(api, properties={"customData": [field("value", type_)]})

    answer = trigger(api, "OrderShipped", in_slot("customData", {"value": value}))

    if got is None:
        assert answer.status_code == 200, answer.text
    else:
        assert errors_of(answer) == [
            f"Invalid type for property: customData.value. Expected {type_}, got {got}"
        ]


SLOT_NAMES = ["metaData", "customData", "contact.customData", "visitor.customData"]


@pytest.mark.parametrize("slot", SLOT_NAMES)
def test_a_missing_required_field_is_reported_with_its_slot(api, slot):
    make_event(api, properties={slot: [field("ref", "text", required=True), field("note", "text")]})

    assert errors_of(trigger(api, "OrderShipped", in_slot(slot, {"note": "hi"}))) == [
        f"Missing required property: {slot}.ref"
    ]
    assert trigger(api, "OrderShipped", in_slot(slot, {"ref": "r1"})).status_code == 200


@pytest.mark.parametrize("slot", SLOT_NAMES)
def test_an_undeclared_field_is_reported_with_its_slot(api, slot):
    make_event(api, properties={slot: [field("ref", "text")]})

    assert errors_of(trigger(api, "OrderShipped", in_slot(slot, {"ref": "r", "extra": 1}))) == [
        f"Undeclared property: {slot}.extra"
    ]


def test_required_target_data_is_required_even_without_that_target(api):
    make_event(api, properties={"contact.customData": [field("tier", "text", required=True)]})

    answer = trigger(api, "OrderShipped", {"visitor": {"id": "v-1"}})

    assert errors_of(answer) == ["Missing required property: contact.customData.tier"]


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({}, "At least one of contact or visitor is required"),
        ({"metaData": {}}, "At least one of contact or visitor is required"),
        ({"contact": {}}, "contact must carry at least one of id, email, phone"),
        ({"contact": {"customData": {}}}, "contact must carry at least one of id, email, phone"),
        ({"visitor": {}}, "visitor must carry id"),
        ({"contact": {"email": 5}}, "contact.email must be a non-empty string, got number"),
        ({"contact": {"phone": ""}}, "contact.phone must be a non-empty string, got empty string"),
        ({"visitor": {"id": True}},
         "visitor.id must be an integer or a non-empty string, got boolean"),
        ({**SOMEONE, "extra": 1},
         "Unknown property: extra (the payload accepts metaData, customData, contact, visitor)"),
        ({"contact": {"id": 1, "name": "Ada"}},
         "Unknown property: contact.name (contact accepts id, email, phone, customData)"),
        ({"contact": "ada@example.com"}, "contact must be an object, got string"),
        ({**SOMEONE, "metaData": []}, "metaData must be an object, got array"),
        ({"visitor": {"id": "v-1", "customData": None}},
         "visitor.customData must be an object, got null"),
    ],
    ids=["empty", "no-target", "contact-without-identifier", "contact-with-only-data",
         "visitor-without-id", "email-not-text", "empty-phone", "visitor-id-bool",
         "unknown-top-level-key", "unknown-contact-key", "contact-not-object",
         "slot-not-object", "slot-null"],
)
def test_payload_structure_rules(api, payload, error):
    make_event(api)

    assert errors_of(trigger(api, "OrderShipped", payload)) == [error]


def test_all_violations_come_back_together_and_nothing_is_recorded(api):
    make_event(api, properties={
        "metaData": [field("source", "text", required=True)],
        "customData": [field("amount", "number", required=True), field("note", "text")],
        "contact.customData": [field("tier", "text")],
    })

    answer = trigger(api, "OrderShipped", {
        "customData": {"amount": "12", "coupon": "X"},
        "contact": {"customData": {"tier": 3}},
        "extra": True,
    })

    errors = [
        "Unknown property: extra (the payload accepts metaData, customData, contact, visitor)",
        "contact must carry at least one of id, email, phone",
        "Missing required property: metaData.source",
        "Invalid type for property: customData.amount. Expected number, got text",
        "Undeclared property: customData.coupon",
        "Invalid type for property: contact.customData.tier. Expected text, got number",
    ]
    assert answer.status_code == 400
    assert answer.json() == {
        "statusCode": 400, "success": False, "message": "; ".join(errors), "errors": errors,
    }
    assert listing(api, "/events/histories")["data"] == []


# --- firing and histories ------------------------------------------------------------------


def push_customer(api: httpx.Client) -> dict[str, Any]:
    """Push one customer and return the contact the service derives from it."""
    assert api.post("/customers", json=[sample_item("customers")]).json()["sent_count"] == 1
    (contact,) = api.get("/contacts/all").json()["data"]
    return contact


@pytest.mark.parametrize(
    "identify",
    [
        lambda c: {"id": c["id_shop_contact"]},
        lambda c: {"email": c["contact_data_email"].upper()},
        lambda c: {"phone": c["contact_data_sms"]},
    ],
    ids=["by-id", "by-email-any-case", "by-phone"],
)
def test_a_known_contact_is_resolved_and_the_firing_recorded(api, identify):
    contact = push_customer(api)
    make_event(api, properties={"customData": [field("amount", "decimal")]})
    payload = {"contact": identify(contact), "customData": {"amount": 12.5}}

    answer = trigger(api, "OrderShipped", payload)

    assert answer.status_code == 200
    assert answer.json() == {
        "statusCode": 200, "success": True, "data": {"id_event_history": 1, "queued": True},
    }
    (row,) = listing(api, "/events/histories")["data"]
    assert row["id_event_history"] == 1
    assert row["id_event"] == 1
    assert row["code_name"] == "OrderShipped"
    assert row["target"] == {"type": "contact", **identify(contact)}
    assert row["id_shop_contact"] == contact["id_shop_contact"]
    assert json.loads(row["payload"]) == payload
    assert row["execution_status"] == "triggered"
    assert row["date_creation"].endswith("Z")


@pytest.mark.parametrize(
    ("payload", "target"),
    [
        ({"contact": {"email": "ghost@example.com"}},
         {"type": "contact", "email": "ghost@example.com"}),
        ({"contact": {"id": 404, "phone": "+100"}},
         {"type": "contact", "id": 404, "phone": "+100"}),
        ({"visitor": {"id": "v-42"}}, {"type": "visitor", "id": "v-42"}),
    ],
    ids=["unknown-contact-email", "unknown-contact-id-and-phone", "visitor"],
)
def test_a_firing_whose_target_is_not_found_is_still_recorded(api, payload, target):
    make_event(api)

    assert trigger(api, "OrderShipped", payload).status_code == 200

    (row,) = listing(api, "/events/histories")["data"]
    assert row["target"] == target
    assert row["id_shop_contact"] is None
    assert row["execution_status"] == "target_not_found"
    assert json.loads(row["payload"]) == payload


def test_a_firing_with_both_targets_is_about_the_contact(api):
    make_event(api)

    trigger(api, "OrderShipped", {"visitor": {"id": "v-1"}, "contact": {"id": 7}})

    assert listing(api, "/events/histories")["data"][0]["target"] == {"type": "contact", "id": 7}


def fire_three(api: httpx.Client) -> None:
    """Three firings: OrderShipped to a known contact, Cart.Abandoned twice to strangers."""
    contact = push_customer(api)
    make_event(api, "OrderShipped")
    make_event(api, "Cart.Abandoned")
    trigger(api, "OrderShipped", {"contact": {"id": contact["id_shop_contact"]}})
    trigger(api, "Cart.Abandoned", SOMEONE)
    trigger(api, "Cart.Abandoned", {"visitor": {"id": "v-9"}})


def test_histories_are_newest_first_by_default(api):
    fire_three(api)

    rows = listing(api, "/events/histories")["data"]

    assert [r["id_event_history"] for r in rows] == [3, 2, 1]
    dates = [r["date_creation"] for r in rows]
    assert dates == sorted(dates, reverse=True)


@pytest.mark.parametrize(
    ("settings", "ids", "total"),
    [
        ({"order": [{"field": "date_creation", "type": "asc"}]}, [1, 2, 3], 3),
        ({"limit": 2}, [3, 2], 3),
        ({"limit": 2, "offset": 2}, [1], 3),
        ({"filter": [{"field": "code_name", "operator": "EQUALS", "values": "Cart.Abandoned"}]},
         [3, 2], 2),
        ({"filter": [{"field": "execution_status", "operator": "IN",
                      "values": ["triggered"]}]}, [1], 1),
        ({"order": [{"field": "code_name", "type": "asc"}], "limit": 2}, [2, 3], 3),
    ],
    ids=["oldest-first", "limit", "offset", "filter-code-name", "filter-status",
         "order-by-code-name"],
)
def test_histories_follow_settings(api, settings, ids, total):
    fire_three(api)

    body = listing(api, "/events/histories", **settings)

    assert [r["id_event_history"] for r in body["data"]] == ids
    assert body["meta"]["pagination"]["total_items"] == total


def test_histories_project_the_requested_fields(api):
    fire_three(api)

    body = listing(
        api, "/events/histories", fields=["id_event_history", "execution_status"], limit=1
    )

    assert body["data"] == [{"id_event_history": 3, "execution_status": "target_not_found"}]
    answer = api.get("/events/histories", params={"fields": "colour"})
    assert answer.status_code == 400
