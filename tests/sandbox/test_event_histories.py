"""Firing custom events over real HTTP: how the target is resolved and recorded, and how the
histories are listed."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from connectors.marketing.samples import sample_item
from tests.sandbox.event_calls import SOMEONE, field, listing, make_event, trigger


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
