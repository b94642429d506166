"""Field override priorities over HTTP: which custom fields stand in for a system field, and
the rules on them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.sandbox.custom_data_calls import define

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
