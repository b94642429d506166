"""Custom event types over real HTTP: creating, reading, listing, updating and deleting them,
and the rules on their code names and property schemas."""

from __future__ import annotations

import json

import pytest

from tests.sandbox.event_calls import (
    SOMEONE,
    create,
    errors_of,
    field,
    listing,
    make_event,
    trigger,
)

EMPTY_SCHEMA = {
    "metaData": [], "customData": [], "contact.customData": [], "visitor.customData": [],
}
CODE_NAME_RULE = (
    "code_name: must be one alphanumeric word (OrderShipped) or two alphanumeric words joined"
    " by one '.' or '_' (Resource.Action or Resource_Action); spaces and special characters"
    " are not allowed"
)


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
