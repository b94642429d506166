"""Strict validation of an event trigger over real HTTP: declared types, required and undeclared
properties per slot, the payload's structure, and every violation reported at once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.event_calls import SOMEONE, errors_of, field, listing, make_event, trigger


def in_slot(slot: str, data: Any) -> dict[str, Any]:
    """A valid targeted payload carrying ``data`` in ``slot``."""
    if slot in ("metaData", "customData"):
        return {**SOMEONE, slot: data}
    owner = slot.split(".")[0]
    target = {"id": "v-1"} if owner == "visitor" else {"email": "nobody@example.com"}
    return {owner: {**target, "customData": data}}


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
