"""Custom data definitions over HTTP: creating, listing, validating, extending, deactivating
and deleting them."""

from __future__ import annotations

import pytest

from tests.sandbox.custom_data_calls import REVIEWS, define, records, review, save


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
