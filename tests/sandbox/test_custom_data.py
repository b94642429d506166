"""Custom data definitions, field override priorities and custom data records, over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from connectors.marketing.resources import CUSTOM_DATA_RECORDS_MAX_BATCH
from connectors.marketing.samples import sample_item

REVIEWS: dict[str, Any] = {
    "name": "product_reviews",
    "description": "Reviews left on products",
    "unique_keys": ["review_ref"],
    "fields": [
        {"name": "review_ref", "label": "Reference", "type": "text", "required": True},
        {"name": "rating", "type": "number", "required": True},
        {"name": "comment", "type": "longtext"},
        {"name": "channel", "type": "list", "options": ["web", "store"], "default": "web"},
    ],
}


def define(api: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = api.post("/custom-data-definitions", json=body or REVIEWS)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def records(api: httpx.Client, id_definition: int, **params: Any) -> list[dict[str, Any]]:
    response = api.get(f"/custom-data-records/{id_definition}", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def save(api: httpx.Client, id_definition: int, items: list[Any]) -> dict[str, Any]:
    response = api.post(f"/custom-data-records/{id_definition}", json=items)
    assert response.status_code == 200, response.text
    return response.json()


def review(ref: str, rating: int = 4, **more: Any) -> dict[str, Any]:
    return {"review_ref": ref, "rating": rating, **more}


# --- definitions ---------------------------------------------------------------------------


def test_a_created_definition_gets_an_id_is_active_and_is_timestamped(api):
    created = define(api)
    assert isinstance(created["id"], int)
    assert created["active"] is True
    assert created["created_at"] == created["updated_at"]
    assert created["fields"][1]["label"] == "rating"  # the label defaults to the name
    assert api.get(f"/custom-data-definitions/{created['id']}").json()["data"] == created


def test_definitions_are_listed_in_the_list_envelope_with_listing_parameters(api):
    define(api)
    define(api, {**REVIEWS, "name": "store_visits"})
    body = api.get(
        "/custom-data-definitions",
        params={"fields": "id,name", "filters[0][field]": "name",
                "filters[0][operator]": "STARTS_WITH", "filters[0][values]": "store"},
    ).json()
    assert [d["name"] for d in body["data"]] == ["store_visits"]
    assert set(body["data"][0]) == {"id", "name"}
    assert body["meta"]["pagination"]["total_items"] == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"name": None}, "name:", id="name-required"),
        pytest.param({"fields": [{"name": "x", "type": "money"}]}, "fields[0].type",
                     id="unknown-type"),
        pytest.param({"unique_keys": ["sku"]}, "unique_keys: 'sku' is not a declared field",
                     id="unique-key-not-declared"),
        pytest.param({"fields": [{"name": "a", "type": "text"}, {"name": "a", "type": "bool"}],
                      "unique_keys": []}, "'a' is declared twice", id="field-name-twice"),
        pytest.param({"relationships": [{"sourceField": "nope", "targetSchemaType": "system",
                                         "targetSchema": "contacts", "targetField": "id"}]},
                     "relationships[0].sourceField: 'nope' is not a declared field",
                     id="relationship-on-undeclared-field"),
        pytest.param({"relationships": [{"sourceField": "rating", "targetSchemaType": "remote",
                                         "targetSchema": "x", "targetField": "id"}]},
                     "relationships[0].targetSchemaType", id="relationship-target-type"),
        pytest.param({"fields": [{"name": "n", "type": "number", "default": "3"}],
                      "unique_keys": []}, "default: expected an integer",
                     id="default-of-wrong-type"),
        pytest.param({"fields": [{"name": "t", "type": "text", "options": ["a"]}],
                      "unique_keys": []}, "only list fields take options", id="options-on-text"),
        pytest.param({"fields": [{"name": "id", "type": "number"}], "unique_keys": []},
                     "'id' is reserved", id="id-is-reserved"),
        pytest.param({"colour": "red"}, "colour", id="unknown-key"),
    ],
)
def test_an_invalid_definition_is_refused_with_a_message_naming_the_problem(api, change, message):
    body = {k: v for k, v in {**REVIEWS, **change}.items() if v is not None}
    response = api.post("/custom-data-definitions", json=body)
    assert response.status_code == 400
    assert message in response.json()["message"]


def test_definition_names_are_unique_in_a_shop(api):
    define(api)
    response = api.post("/custom-data-definitions", json={**REVIEWS, "name": "Product_Reviews"})
    assert response.status_code == 400
    assert "exists" in response.json()["message"]


def test_deleting_a_definition_is_idempotent(api):
    id_definition = define(api)["id"]
    assert api.delete(f"/custom-data-definitions/{id_definition}").status_code == 200
    assert api.delete(f"/custom-data-definitions/{id_definition}").status_code == 200
    assert api.get(f"/custom-data-definitions/{id_definition}").status_code == 404
    assert api.get(f"/custom-data-records/{id_definition}").status_code == 404


def test_extend_adds_fields_but_never_redefines_one(api):
    id_definition = define(api)["id"]
    extended = api.patch(f"/custom-data-definitions/{id_definition}/extend",
                         json={"fields": [{"name": "verified", "type": "bool"}]})
    assert [f["name"] for f in extended.json()["data"]["fields"]][-1] == "verified"
    redefined = api.patch(f"/custom-data-definitions/{id_definition}/extend",
                          json={"fields": [{"name": "rating", "type": "decimal"}]})
    assert redefined.status_code == 400
    assert "'rating' already exists" in redefined.json()["message"]
    assert save(api, id_definition, [review("r1", verified=True)])["sent_count"] == 1


def test_a_deactivated_definition_keeps_its_records_readable_but_refuses_writes(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1")])
    off = api.patch(f"/custom-data-definitions/{id_definition}/deactivate").json()["data"]
    assert off["active"] is False
    refused = api.post(f"/custom-data-records/{id_definition}", json=[review("r2")])
    assert refused.status_code == 400
    assert "deactivated" in refused.json()["message"]
    assert [r["review_ref"] for r in records(api, id_definition)] == ["r1"]
    api.patch(f"/custom-data-definitions/{id_definition}/activate")
    assert save(api, id_definition, [review("r2")])["sent_count"] == 1


# --- field override priorities -------------------------------------------------------------

PRICE = {"target_system_schema": "products", "system_field_name": "price"}


def put_overrides(
    api: httpx.Client, overrides: list[dict[str, Any]], **params: str
) -> httpx.Response:
    return api.put("/custom-data-definitions/overrides", params=params or PRICE,
                   json={"overrides": overrides})


def test_overrides_replace_the_rows_of_their_pair_and_are_listed(api):
    id_def = define(api, {"name": "prices", "fields": [{"name": "b2b", "type": "decimal"},
                                                       {"name": "promo", "type": "decimal"}]})["id"]
    put_overrides(api, [{"id_custom_data_definition": id_def, "custom_field_name": "b2b",
                         "priority": 2}])
    answer = put_overrides(api, [
        {"id_custom_data_definition": id_def, "custom_field_name": "b2b", "priority": 2},
        {"id_custom_data_definition": id_def, "custom_field_name": "promo", "priority": 1},
    ])
    assert [r["custom_field_name"] for r in answer.json()["data"]] == ["promo", "b2b"]
    put_overrides(api, [{"id_custom_data_definition": id_def, "custom_field_name": "promo",
                         "priority": 1}], target_system_schema="products",
                  system_field_name="price_discount")
    only_price = '{"field": "system_field", "operator": "EQUALS", "value": "price"}'
    listed = api.get("/custom-data-definitions/overrides", params={"filters": only_price})
    rows = listed.json()["data"]
    assert sorted((r["custom_field_name"], r["priority"]) for r in rows) == [
        ("b2b", 2), ("promo", 1)]
    assert set(rows[0]) == {"id", "id_custom_data_definition", "custom_field_name",
                            "target_schema", "system_field", "priority"}
    assert listed.json()["meta"]["pagination"]["total_items"] == 2


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param([("f1", 1), ("f2", 2), ("f3", 3), ("f4", 4)], "at most 3 overrides",
                     id="four-for-one-pair"),
        pytest.param([("f1", 0)], "priority", id="priority-below-1"),
        pytest.param([("f1", "1")], "priority", id="priority-not-an-integer"),
        pytest.param([("f1", 1), ("f2", 1)], "priority 1 is given twice", id="same-priority-twice"),
        pytest.param([("nope", 1)], "'nope' is not a field", id="unknown-field"),
    ],
)
def test_override_rules_are_enforced(api, overrides, message):
    fields = [{"name": f"f{i}", "type": "decimal"} for i in range(1, 5)]
    id_def = define(api, {"name": "prices", "fields": fields})["id"]
    body = [{"id_custom_data_definition": id_def, "custom_field_name": name, "priority": p}
            for name, p in overrides]
    response = put_overrides(api, body)
    assert response.status_code == 400
    assert message in response.json()["message"]


def test_an_override_needs_an_existing_definition_and_both_query_parameters(api):
    response = api.put("/custom-data-definitions/overrides", json={"overrides": [
        {"id_custom_data_definition": 999, "custom_field_name": "x", "priority": 1}]})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert any("target_system_schema" in e for e in errors)
    assert any("system_field_name" in e for e in errors)
    assert any("999 does not exist" in e for e in errors)


# --- records -------------------------------------------------------------------------------


def test_a_batch_holds_at_most_the_records_limit(api):
    id_definition = define(api)["id"]
    full = [review(f"r{i}") for i in range(CUSTOM_DATA_RECORDS_MAX_BATCH)]
    assert save(api, id_definition, full)["sent_count"] == CUSTOM_DATA_RECORDS_MAX_BATCH
    response = api.post(f"/custom-data-records/{id_definition}", json=[*full, review("one-more")])
    assert response.status_code == 400
    assert f"at most {CUSTOM_DATA_RECORDS_MAX_BATCH}" in response.json()["message"]


def test_valid_records_of_a_batch_are_accepted_and_invalid_ones_reported(api):
    id_definition = define(api)["id"]
    result = save(api, id_definition, [
        review("r1"), {"rating": 3}, "not an object", review("r2", colour="red"), review("r3"),
    ])
    assert (result["sent_count"], result["rejected_count"]) == (2, 3)
    rejected = {r["index"]: r for r in result["rejected_items"]}
    assert rejected[1]["errors"] == ["review_ref: is required"]
    assert rejected[1]["item"] == {"rating": 3}
    assert "must be a JSON object" in rejected[2]["errors"][0]
    assert rejected[3]["errors"][0].startswith("colour: is not a field of custom data definition")
    assert [r["review_ref"] for r in records(api, id_definition)] == ["r1", "r3"]


ALL_TYPES = {
    "name": "all_types",
    "fields": [
        {"name": "b", "type": "bool"}, {"name": "t", "type": "text"},
        {"name": "lt", "type": "longtext"}, {"name": "n", "type": "number"},
        {"name": "d", "type": "decimal"}, {"name": "l", "type": "list"},
        {"name": "lo", "type": "list", "options": ["red", "green", 1]},
        {"name": "day", "type": "date"}, {"name": "dt", "type": "datetime"},
        {"name": "j", "type": "json"}, {"name": "g", "type": "geolocation"},
    ],
}


@pytest.mark.parametrize(
    ("field", "value", "accepted"),
    [
        pytest.param("b", True, True, id="bool-true"),
        pytest.param("b", "true", False, id="bool-from-string"),
        pytest.param("b", 1, False, id="bool-from-number"),
        pytest.param("t", "hello", True, id="text"),
        pytest.param("t", "x" * 256, False, id="text-too-long"),
        pytest.param("t", 5, False, id="text-from-number"),
        pytest.param("lt", "x" * 5000, True, id="longtext"),
        pytest.param("n", 42, True, id="number-integer"),
        pytest.param("n", 4.5, False, id="number-fraction"),
        pytest.param("n", "42", False, id="number-from-string"),
        pytest.param("d", 19.99, True, id="decimal"),
        pytest.param("d", 3, True, id="decimal-integer"),
        pytest.param("d", False, False, id="decimal-from-bool"),
        pytest.param("l", ["a", 2], True, id="list"),
        pytest.param("l", "a", False, id="list-from-string"),
        pytest.param("l", [{"a": 1}], False, id="list-of-objects"),
        pytest.param("lo", "green", True, id="options-one"),
        pytest.param("lo", ["red", 1], True, id="options-several"),
        pytest.param("lo", "blue", False, id="options-unknown"),
        pytest.param("lo", True, False, id="options-true-is-not-1"),
        pytest.param("day", "2024-02-29", True, id="date"),
        pytest.param("day", "2023-02-29", False, id="date-impossible"),
        pytest.param("day", "2024-02-29T10:00:00Z", False, id="date-with-time"),
        pytest.param("dt", "2024-02-29T10:00:00Z", True, id="datetime-utc"),
        pytest.param("dt", "2024-02-29T10:00:00.123+02:00", True, id="datetime-offset"),
        pytest.param("dt", "2024-02-29", False, id="datetime-date-only"),
        pytest.param("dt", "yesterday", False, id="datetime-words"),
        pytest.param("j", {"a": [1]}, True, id="json-object"),
        pytest.param("j", [1, 2], True, id="json-array"),
        pytest.param("j", '{"a": 1}', False, id="json-as-string"),
        pytest.param("g", {"lat": 48.85, "lng": 2.35}, True, id="geolocation-object"),
        pytest.param("g", "48.85,2.35", True, id="geolocation-string"),
        pytest.param("g", {"lat": 95, "lng": 2}, False, id="geolocation-out-of-range"),
        pytest.param("g", {"lat": 48.85}, False, id="geolocation-missing-lng"),
        pytest.param("g", "48.85", False, id="geolocation-one-number"),
        pytest.param("t", None, True, id="null-clears-an-optional-field"),
    ],
)
def test_each_field_type_accepts_its_values_and_rejects_others(api, field, value, accepted):
    id_definition = define(api, ALL_TYPES)["id"]
    result = save(api, id_definition, [{field: value}])
    assert result["sent_count"] == int(accepted), result["rejected_items"]
    if accepted:
        assert records(api, id_definition)[0][field] == value
    else:
        assert result["rejected_items"][0]["errors"][0].startswith(f"{field}: ")


def test_record_writes_are_accepted_at_once_and_readable_after_the_delay(start):
    running = start("--visibility-delay", "60", "--manual-clock")
    slow = running.client()
    id_definition = define(slow)["id"]  # definitions are configuration: visible at once
    assert save(slow, id_definition, [review("r1")])["sent_count"] == 1
    assert records(slow, id_definition) == []
    running.advance_clock(59)
    assert records(slow, id_definition) == []
    running.advance_clock(1)
    assert [r["review_ref"] for r in records(slow, id_definition)] == ["r1"]


def test_a_required_field_cannot_be_null(api):
    id_definition = define(api)["id"]
    result = save(api, id_definition, [review("r1", rating=None)])
    assert result["rejected_items"][0]["errors"] == ["rating: is required and cannot be null"]


def test_missing_fields_take_their_default_on_insert(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1")])
    assert records(api, id_definition)[0]["channel"] == "web"


def test_the_service_assigns_record_ids(api):
    id_definition = define(api)["id"]
    result = save(api, id_definition, [{"id": 7, **review("r1")}])
    assert "id: is assigned by the service" in result["rejected_items"][0]["errors"][0]


def test_saving_a_record_with_known_unique_key_values_updates_it(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1", 2, comment="meh"), review("r2", 5)])
    save(api, id_definition, [review("r1", 4)])
    rows = records(api, id_definition)
    assert [(r["id"], r["review_ref"], r["rating"]) for r in rows] == [(1, "r1", 4), (2, "r2", 5)]
    assert rows[0]["comment"] == "meh"  # fields the update does not carry keep their values


def test_without_unique_keys_every_saved_record_is_a_new_row(api):
    id_definition = define(api, {**REVIEWS, "unique_keys": []})["id"]
    save(api, id_definition, [review("r1")])
    save(api, id_definition, [review("r1")])
    assert [r["id"] for r in records(api, id_definition)] == [1, 2]


def test_put_updates_records_by_id_and_rejects_unknown_ids(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1")])
    response = api.put(f"/custom-data-records/{id_definition}",
                       json=[{"id": 1, "rating": 1}, {"id": 99, "rating": 2}, {"rating": 3}])
    result = response.json()
    assert (result["sent_count"], result["rejected_count"]) == (1, 2)
    assert "no record with id 99" in result["rejected_items"][0]["errors"][0]
    assert "id: is required" in result["rejected_items"][1]["errors"][0]
    assert records(api, id_definition)[0]["rating"] == 1


def test_patch_updates_one_record(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1")])
    assert api.patch(f"/custom-data-records/{id_definition}/1",
                     json={"comment": "great"}).status_code == 200
    assert records(api, id_definition)[0]["comment"] == "great"
    assert api.patch(f"/custom-data-records/{id_definition}/1",
                     json={"rating": "five"}).status_code == 400
    assert api.patch(f"/custom-data-records/{id_definition}/42", json={}).status_code == 404


def test_deleting_one_record_is_idempotent(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1"), review("r2")])
    for _ in range(2):
        response = api.delete(f"/custom-data-records/{id_definition}", params={"id": 1})
        assert response.status_code == 200
    assert [r["id"] for r in records(api, id_definition)] == [2]
    assert api.delete(f"/custom-data-records/{id_definition}").status_code == 400


def test_bulk_delete_takes_a_plain_array_of_ids_and_is_idempotent(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1"), review("r2"), review("r3")])
    url = f"/custom-data-records/{id_definition}/bulk-delete"
    for _ in range(2):
        assert api.post(url, json=[1, 3, 404]).json()["sent_count"] == 3
    assert [r["id"] for r in records(api, id_definition)] == [2]
    assert api.post(url, json={"ids": [2]}).status_code == 400


def test_records_are_listed_with_filters_fields_and_order(api):
    id_definition = define(api)["id"]
    save(api, id_definition, [review("r1", 5), review("r2", 2), review("r3", 4)])
    rows = records(api, id_definition, **{
        "fields": "id,rating",
        "filters[0][field]": "rating", "filters[0][operator]": "GREATER_THAN",
        "filters[0][values]": "3",
        "order[0][field]": "rating", "order[0][type]": "desc",
    })
    assert rows == [{"id": 1, "rating": 5}, {"id": 3, "rating": 4}]
    unknown = api.get(f"/custom-data-records/{id_definition}", params={"fields": "price"})
    assert unknown.status_code == 400


def test_records_of_an_unknown_definition_are_not_found(api):
    assert api.get("/custom-data-records/404").status_code == 404
    assert api.post("/custom-data-records/404", json=[{}]).status_code == 404


LOYALTY = {
    "name": "loyalty_cards",
    "fields": [{"name": "card", "type": "text", "required": True},
               {"name": "holder", "type": "number"}],
    "relationships": [{"sourceField": "holder", "targetSchemaType": "system",
                       "targetSchema": "contacts", "targetField": "id_shop_contact"}],
}


def test_a_relation_value_may_be_a_resolver_of_the_related_contact(api):
    api.post("/customers", json=[sample_item("customers", email="ada@example.com")])
    contact_id = api.get("/contacts/all").json()["data"][0]["id_shop_contact"]
    id_definition = define(api, LOYALTY)["id"]
    result = save(api, id_definition, [
        {"card": "A1", "holder": {"by": "email", "value": "ada@example.com"}},
        {"card": "A2", "holder": {"by": "id_customer", "value": "c-1001"}},
        {"card": "A3", "holder": {"by": "email", "value": "nobody@example.com"}},
        {"card": "A4", "holder": {"by": "phone", "value": "+33600000000"}},
    ])
    assert "by: must be one of id_contact, email, id_customer" in (
        result["rejected_items"][0]["errors"][0])
    assert [r["holder"] for r in records(api, id_definition)] == [contact_id, contact_id, None]


def test_a_resolver_is_only_accepted_on_a_relation_field(api):
    id_definition = define(api, {**LOYALTY, "relationships": []})["id"]
    result = save(api, id_definition, [{"card": "A1", "holder": {"by": "email", "value": "a@b.c"}}])
    assert result["rejected_items"][0]["errors"] == ["holder: expected an integer, got object"]
