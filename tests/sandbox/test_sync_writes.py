"""Bulk writes on the sync resources: per-item validation, save/update, deletes, read-back."""

from __future__ import annotations

import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item, sample_resources


def route(name: str) -> str:
    resource = SYNC_RESOURCES[name]
    return "/" + (resource.bulk_route or resource.route)


def read_route(name: str) -> str:
    resource = SYNC_RESOURCES[name]
    parent = sample_item(name).get(resource.parent_field) if resource.parent_field else None
    return "/" + resource.item_route(parent)


@pytest.mark.parametrize("name", sample_resources())
def test_every_sync_resource_saves_its_sample_item_and_reads_it_back(api, name):
    resource = SYNC_RESOURCES[name]
    answer = api.post(route(name), json=[sample_item(name)])

    assert answer.status_code == 200
    assert answer.json() == {
        "statusCode": 200, "sent_count": 1, "rejected_count": 0, "rejected_items": [],
    }
    listed = api.get(read_route(name)).json()
    assert listed["meta"]["pagination"]["total_items"] == 1
    assert str(listed["data"][0][resource.id_field]) == str(sample_item(name)[resource.id_field])
    assert listed["data"][0]["data_source_id"] == 1


def test_invalid_items_are_rejected_one_by_one_and_their_neighbours_accepted(api):
    good = [sample_item("customers", customer_id=f"c{i}", email=f"c{i}@example.com")
            for i in range(3)]
    bad_email = sample_item("customers", customer_id="x1", email="not-an-email")
    missing = {"customer_id": "x2", "email": "x2@example.com"}
    batch = [good[0], bad_email, good[1], missing, good[2], "not an object"]

    body = api.post("/customers", json=batch).json()

    assert (body["sent_count"], body["rejected_count"]) == (3, 3)
    by_index = {r["index"]: r for r in body["rejected_items"]}
    assert sorted(by_index) == [1, 3, 5]
    assert by_index[1]["item"] == bad_email
    assert by_index[1]["errors"] == ["email: 'not-an-email' is not a well-formed email address"]
    assert "first_name: is required" in by_index[3]["errors"]
    assert "lang: is required" in by_index[3]["errors"]
    assert by_index[5]["errors"] == ["item: must be a JSON object"]
    ids = {c["customer_id"] for c in api.get("/customers", params={"limit": 50}).json()["data"]}
    assert ids == {"c0", "c1", "c2"}


def test_nested_values_are_validated_with_their_path(api):
    order = sample_item("orders")
    order["products"][0]["price"] = -1

    body = api.post("/orders", json=[order]).json()

    assert body["rejected_items"][0]["errors"] == [
        "products[0].price: Input should be greater than or equal to 0"
    ]


@pytest.mark.parametrize(("name", "limit"), [("customers", 50), ("statuses", 100)])
def test_a_batch_over_the_resource_maximum_is_refused_whole(api, name, limit):
    resource = SYNC_RESOURCES[name]
    items = [sample_item(name, **{resource.id_field: str(i)}) for i in range(limit + 1)]

    too_many = api.post(route(name), json=items)
    exactly = api.post(route(name), json=items[:limit])

    assert too_many.status_code == 400
    assert f"at most {limit} items; got {limit + 1}" in too_many.json()["message"]
    assert exactly.json()["sent_count"] == limit


@pytest.mark.parametrize(
    ("body", "message"),
    [({"customer_id": "c"}, "JSON array"), (None, "JSON body")],
    ids=["object-not-array", "no-body"],
)
def test_a_body_that_is_not_an_array_is_a_client_error(api, body, message):
    answer = api.post("/customers", json=body) if body else api.post("/customers")
    assert answer.status_code == 400
    assert message in answer.json()["message"]


def test_malformed_json_is_a_client_error(api):
    answer = api.post("/customers", content=b"[{", headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["message"].startswith("The body is not valid JSON")


def test_post_saves_so_resending_updates_instead_of_duplicating(api):
    api.post("/customers", json=[sample_item("customers", first_name="Ada")])
    api.post("/customers", json=[sample_item("customers", first_name="Augusta")])

    listed = api.get("/customers").json()["data"]

    assert [c["first_name"] for c in listed] == ["Augusta"]


def test_items_are_keyed_within_their_data_source(api):
    second = api.post("/data-sources", json={"label": "POS", "type": "api"}).json()["data"]
    api.post("/customers", json=[sample_item("customers")])
    api.post("/customers", json=[sample_item("customers", id_data_source=second["id_data_source"])])

    listed = api.get("/customers").json()["data"]

    assert sorted(c["data_source_id"] for c in listed) == [1, second["id_data_source"]]


def test_an_unknown_data_source_rejects_the_item(api):
    body = api.post("/customers", json=[sample_item("customers", id_data_source=99)]).json()
    assert body["rejected_items"][0]["errors"] == [
        "id_data_source: data source 99 does not exist in this shop"
    ]


def test_language_scoped_items_keep_one_row_per_language(api):
    api.post("/orders-statuses", json=[sample_item("statuses", lang="en", name="Shipped"),
                                       sample_item("statuses", lang="fr", name="Expédiée")])
    rows = api.get("/orders-statuses", params={"order[0][field]": "lang", "order[0][type]": "asc"}).json()["data"]
    assert [(r["lang"], r["name"], r["is_active"]) for r in rows] == [
        ("en", "Shipped", True), ("fr", "Expédiée", True)
    ]


def test_put_updates_existing_items_and_rejects_unknown_ids(api):
    api.post("/customers", json=[sample_item("customers")])

    body = api.put("/customers", json=[
        sample_item("customers", last_name="King"),
        sample_item("customers", customer_id="ghost", email="ghost@example.com"),
    ]).json()

    assert body["sent_count"] == 1
    assert body["rejected_items"][0]["index"] == 1
    assert "no item with customer_id 'ghost' exists" in body["rejected_items"][0]["errors"][0]
    assert api.get("/customers/c-1001").json()["data"]["last_name"] == "King"


def test_bulk_delete_is_idempotent_and_ignores_unknown_ids(api):
    api.post("/customers", json=[sample_item("customers")])

    first = api.post("/customers/bulk-delete", json={"customer_ids": ["c-1001", "nobody"]})
    second = api.post("/customers/bulk-delete", json={"customer_ids": ["c-1001"]})

    assert first.status_code == second.status_code == 200
    assert first.json()["sent_count"] == 2
    assert api.get("/customers").json()["data"] == []
    assert api.get("/customers/c-1001").status_code == 404


def test_bulk_delete_needs_the_resource_key(api):
    answer = api.post("/orders/bulk-delete", json={"ids": ["o1"]})
    assert answer.status_code == 400
    assert '"order_ids"' in answer.json()["message"]


def test_addresses_are_written_under_their_customer_or_across_customers(api):
    api.post("/customers/c-1001/addresses", json=[sample_item("addresses", address_id=1)])
    across = api.post("/customers/addresses/bulk", json=[
        sample_item("addresses", address_id=2, customer_id="c-2002"),
        sample_item("addresses", address_id=3, customer_id=None),
    ]).json()

    assert across["sent_count"] == 1
    assert across["rejected_items"][0]["errors"] == [
        "customer_id: is required on customers/addresses/bulk"
    ]
    mine = api.get("/customers/c-1001/addresses").json()["data"]
    theirs = api.get("/customers/c-2002/addresses").json()["data"]
    assert [a["address_id"] for a in mine] == [1]
    assert [a["address_id"] for a in theirs] == [2]


def test_an_item_under_a_parent_route_cannot_name_another_parent(api):
    body = api.post("/products/101/variations",
                    json=[sample_item("variations", product_id=202)]).json()
    assert body["rejected_items"][0]["errors"] == ["product_id: is 202 but the route is for '101'"]


def test_orders_read_back_flattened_with_customer_carrier_and_status(api):
    api.post("/customers", json=[sample_item("customers")])
    api.post("/orders-carriers", json=[sample_item("carriers")])
    api.post("/orders-statuses", json=[sample_item("statuses")])
    api.post("/orders", json=[sample_item("orders")])

    by_id = api.get("/orders/id/o-9001").json()["data"]
    by_reference = api.get("/orders/reference/XKBKNABJK").json()["data"]

    assert by_id == by_reference
    assert by_id["customer_email"] == "ada@example.com"
    assert by_id["customer_first_name"] == "Ada"
    assert by_id["carrier_name"] == "Colissimo"
    assert (by_id["status_name"], by_id["status_deleted"]) == ("Payment accepted", False)
    assert by_id["contact_id"] is not None
    assert "products" not in by_id


def test_customers_become_contacts_unified_by_email(api):
    pos = api.post("/data-sources", json={"label": "POS"}).json()["data"]["id_data_source"]
    api.post("/customers", json=[
        sample_item("customers", customer_id="web-1", email="Ada@Example.com"),
        sample_item("customers", customer_id="pos-1", email="ada@example.com",
                    id_data_source=pos),
        sample_item("customers", customer_id="web-2", email="bob@example.com"),
    ])

    contacts = api.get("/contacts/all").json()["data"]

    assert sorted(c["contact_data_email"].lower() for c in contacts) == [
        "ada@example.com", "bob@example.com"
    ]
    found = api.get("/contacts", params={"contact_data_email": "ADA@example.com"})
    assert found.json()["data"]["contact_first_name"] == "Ada"


def test_deleting_the_last_customer_of_an_email_removes_its_contact(api):
    api.post("/customers", json=[sample_item("customers")])
    api.post("/customers/bulk-delete", json={"customer_ids": ["c-1001"]})
    assert api.get("/contacts/all").json()["data"] == []


def test_customer_groups_are_read_through_the_customer(api):
    api.post("/customers-groups", json=[sample_item("groups")])
    api.post("/customers", json=[sample_item("customers", group_ids=["g1"])])

    groups = api.get("/customers/c-1001/groups").json()["data"]

    assert [g["name"] for g in groups] == ["VIP"]


def test_single_reads_of_unknown_ids_are_404_with_a_json_body(api):
    answer = api.get("/orders/id/nope")
    assert answer.status_code == 404
    assert answer.json() == {
        "statusCode": 404, "success": False, "message": "Order with order_id 'nope' not found",
        "errors": ["Order with order_id 'nope' not found"],
    }


def test_reads_by_id_and_reference_follow_updates_and_deletes(api):
    api.post("/customers", json=[sample_item("customers")])
    api.post("/orders", json=[sample_item("orders", order_id=f"o-{n}", reference=f"R{n}")
                              for n in range(1, 6)])
    api.post("/orders", json=[sample_item("orders", order_id="o-2", reference="R2-NEW")])
    api.post("/orders/bulk-delete", json={"order_ids": ["o-3"]})
    api.post("/customers", json=[sample_item("customers", first_name="Augusta")])

    listed = api.get("/orders", params={"filters[0][field]": "order_id",
                                        "filters[0][operator]": "IN",
                                        "filters[0][values]": "o-1,o-2,o-3,o-4"}).json()

    assert sorted(o["order_id"] for o in listed["data"]) == ["o-1", "o-2", "o-4"]
    assert listed["meta"]["pagination"]["total_items"] == 3
    assert {o["customer_first_name"] for o in listed["data"]} == {"Augusta"}
    assert api.get("/orders/reference/R2-NEW").json()["data"]["order_id"] == "o-2"
    assert api.get("/orders/reference/R2").status_code == 404
    assert api.get("/orders/reference/R3").status_code == 404
