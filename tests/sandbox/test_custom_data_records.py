"""Custom data records over HTTP: batches, field types, defaults, upserts by unique key,
updates, deletes, listings and relation resolvers."""

from __future__ import annotations

import pytest

from connectors.marketing.resources import CUSTOM_DATA_RECORDS_MAX_BATCH
from connectors.marketing.samples import sample_item
from tests.sandbox.custom_data_calls import REVIEWS, define, records, review, save


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
