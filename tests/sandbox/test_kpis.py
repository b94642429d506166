"""Custom KPIs: their own key pattern, bare objects, sources, fields and preview."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from sandbox.marketing.settings import DEFAULT_KEY, DEFAULT_KPI_KEY

RESPONSE_KEYS = {
    "id_custom_kpi", "id_shop", "name", "description", "measures", "source_type",
    "source_schema_name", "source_table_name", "relations_chain", "dimension_field",
    "secondary_dimension_field", "time_field", "filters", "status", "last_event_run_at",
    "last_error", "lookback_max_months", "created_at", "updated_at",
}


def revenue(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": {"en": "Revenue"},
        "description": {"en": "Order amounts"},
        "source_type": "system",
        "source_schema_name": "orders",
        "measures": [{"id_measure": "m1", "type": "sum", "field": "amount",
                      "label": {"en": "Revenue"}, "format": "currency", "suffix": "EUR",
                      "position": 0}],
        "dimensions": [{"id_dimension": "d1", "field": "currency", "label": {"en": "Currency"},
                        "position": 0},
                       {"id_dimension": "d2", "field": "lang", "position": 1}],
        "time_field": "created_at",
        "filters": [{"field": "is_confirmed", "operator": "EQUALS", "value": True}],
        "lookback_max_months": 6,
    }
    body.update(changes)
    return body


@pytest.fixture
def default_shop(sandbox):
    """The session sandbox's default shop, on both of its keys (shared: use unique names)."""
    return sandbox.client(DEFAULT_KEY), sandbox.client(DEFAULT_KPI_KEY)


@pytest.mark.parametrize(
    ("key", "path"),
    [
        pytest.param("abcd1234.a-general-key", "/custom-stats/kpis", id="general-key-on-kpis"),
        pytest.param("kpi-0123456789abcdef0123", "/custom-data-definitions",
                     id="kpi-key-on-general-endpoint"),
        pytest.param("too-short", "/custom-stats/kpis", id="kpi-key-too-short"),
        pytest.param(None, "/custom-stats/kpis", id="no-key"),
    ],
)
def test_kpi_endpoints_and_the_others_take_different_key_patterns(sandbox, key, path):
    response = sandbox.client(key).get(path)
    assert response.status_code == 401
    assert response.json()["success"] is False


def test_a_created_kpi_is_answered_bare_and_starts_backfilling(kpi_api):
    response = kpi_api.post("/custom-stats/kpis", json=revenue())
    assert response.status_code == 200, response.text
    kpi = response.json()
    assert set(kpi) == RESPONSE_KEYS
    assert kpi["status"] == "backfilling"
    assert isinstance(kpi["id_custom_kpi"], str) and isinstance(kpi["id_shop"], int)
    assert (kpi["dimension_field"], kpi["secondary_dimension_field"]) == ("currency", "lang")
    assert kpi["measures"][0]["chart_types"] == ["line", "bar"]
    assert kpi["filters"] == {"combinator": "AND", "conditions": [
        {"field": "is_confirmed", "operator": "EQUALS", "value": True}]}
    assert kpi["source_table_name"] == "orders"
    assert kpi["last_event_run_at"] is None and kpi["last_error"] is None


def test_kpis_are_listed_as_a_plain_array(kpi_api):
    assert kpi_api.get("/custom-stats/kpis").json() == []
    kpi = kpi_api.post("/custom-stats/kpis", json=revenue()).json()
    assert kpi_api.get("/custom-stats/kpis").json() == [kpi]


def test_a_kpi_is_read_and_patched_by_id(kpi_api):
    kpi = kpi_api.post("/custom-stats/kpis", json=revenue()).json()
    url = f"/custom-stats/kpis/{kpi['id_custom_kpi']}"
    assert kpi_api.get(url).json() == kpi
    patched = kpi_api.patch(url, json={"name": {"en": "Turnover"}, "dimensions": []}).json()
    assert patched["name"] == {"en": "Turnover"}
    assert patched["dimension_field"] is None
    assert (patched["id_custom_kpi"], patched["created_at"]) == (kpi["id_custom_kpi"],
                                                                  kpi["created_at"])
    assert kpi_api.get(url).json() == patched
    assert kpi_api.patch(url, json={"measures": []}).status_code == 400
    assert kpi_api.get("/custom-stats/kpis/unknown").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(None, id="no-body"),
        pytest.param({}, id="empty-object"),
        pytest.param({"confirmation": False}, id="confirmation-false"),
    ],
)
def test_deleting_a_kpi_needs_confirmation(kpi_api, body):
    kpi = kpi_api.post("/custom-stats/kpis", json=revenue()).json()
    url = f"/custom-stats/kpis/{kpi['id_custom_kpi']}"
    response = kpi_api.request("DELETE", url, json=body)
    assert response.status_code == 400
    assert "confirmation" in response.json()["message"]
    assert kpi_api.get(url).status_code == 200


def test_a_confirmed_delete_removes_the_kpi_and_is_idempotent(kpi_api):
    kpi = kpi_api.post("/custom-stats/kpis", json=revenue()).json()
    url = f"/custom-stats/kpis/{kpi['id_custom_kpi']}"
    for _ in range(2):
        assert kpi_api.request("DELETE", url, json={"confirmation": True}).status_code == 200
    assert kpi_api.get(url).status_code == 404


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        pytest.param({"measures": []}, "measures", id="no-measure"),
        pytest.param({"name": None}, "name: is required", id="no-name"),
        pytest.param({"source_type": "remote"}, "source_type", id="unknown-source-type"),
        pytest.param({"source_schema_name": "invoices"}, "no system source named 'invoices'",
                     id="unknown-source"),
        pytest.param({"dimensions": [{"id_dimension": "d", "field": "colour"}]},
                     "dimensions[0].field: 'colour' is not a field of orders", id="unknown-field"),
        pytest.param({"measures": [{"id_measure": "m", "type": "median", "field": "amount"}]},
                     "measures[0].type", id="unknown-measure-type"),
        pytest.param({"filters": [{"field": "amount", "operator": "BETWEEN", "value": [1]}]},
                     "BETWEEN takes an array of 2 values", id="between-one-value"),
        pytest.param({"lookback_max_months": 0}, "lookback_max_months", id="lookback-zero"),
    ],
)
def test_an_invalid_kpi_is_refused_with_a_message(kpi_api, changes, message):
    body = {k: v for k, v in revenue(**changes).items() if v is not None}
    response = kpi_api.post("/custom-stats/kpis", json=body)
    assert response.status_code == 400
    assert message in response.json()["message"]


def test_sources_are_the_system_schemas_and_the_shops_definitions(default_shop):
    api, kpi_api = default_shop
    name = f"visits_{uuid.uuid4().hex[:8]}"
    api.post("/custom-data-definitions", json={"name": name, "fields": [
        {"name": "store", "type": "text"}, {"name": "minutes", "type": "number"}]})
    sources = kpi_api.get("/custom-stats/kpis/sources").json()
    system = [s["source_schema_name"] for s in sources if s["source_type"] == "system"]
    assert system == ["orders", "customers", "products", "carts"]
    assert any(s["source_schema_name"] == name for s in sources if s["source_type"] == "custom")


def test_fields_of_a_system_source_are_its_selectable_fields(kpi_api):
    fields = kpi_api.get("/custom-stats/kpis/fields",
                         params={"sourceType": "system", "sourceSchema": "orders"}).json()
    by_name = {f["name"]: f["type"] for f in fields}
    assert (by_name["amount"], by_name["is_confirmed"], by_name["created_at"]) == (
        "decimal", "bool", "datetime")
    assert "customer_email" in by_name
    chained = kpi_api.get("/custom-stats/kpis/fields", params={
        "sourceType": "system", "sourceSchema": "orders", "relationsChain": "customers"}).json()
    assert "customers.email" in {f["name"] for f in chained}


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"sourceType": "system", "sourceSchema": "invoices"}, id="unknown-schema"),
        pytest.param({"sourceType": "other", "sourceSchema": "orders"}, id="unknown-type"),
        pytest.param({"sourceType": "system"}, id="no-schema"),
    ],
)
def test_fields_of_an_unknown_source_are_refused(kpi_api, params):
    assert kpi_api.get("/custom-stats/kpis/fields", params=params).status_code == 400


def test_a_custom_source_has_its_definition_fields_and_previews_its_records(default_shop):
    api, kpi_api = default_shop
    name = f"visits_{uuid.uuid4().hex[:8]}"
    definition = api.post("/custom-data-definitions", json={"name": name, "fields": [
        {"name": "store", "type": "text"}, {"name": "minutes", "type": "number"}]}).json()["data"]
    fields = kpi_api.get("/custom-stats/kpis/fields",
                         params={"sourceType": "custom", "sourceSchema": name}).json()
    assert [f["name"] for f in fields] == ["id", "store", "minutes"]
    api.post(f"/custom-data-records/{definition['id']}", json=[
        {"store": "Paris", "minutes": 10}, {"store": "Paris", "minutes": 30},
        {"store": "Lyon", "minutes": 5},
    ])
    body = {"name": {"en": "Time in store"}, "source_type": "custom", "source_schema_name": name,
            "measures": [{"id_measure": "visits", "type": "count", "field": "*"},
                         {"id_measure": "avg", "type": "avg", "field": "minutes"}],
            "dimensions": [{"id_dimension": "d", "field": "store"}],
            "filters": [{"field": "minutes", "operator": "GREATER_THAN", "value": 6}]}
    preview = kpi_api.post("/custom-stats/kpis/preview", json=body).json()
    assert preview == {"statusCode": 200, "data": {"rows": [
        {"store": "Paris", "visits": 2, "avg": 20}]}}
    kpi = kpi_api.post("/custom-stats/kpis", json=body).json()
    assert kpi["source_table_name"] == f"custom_data_{definition['id']}"


def test_a_preview_over_no_data_has_no_rows_and_validates_like_create(kpi_api):
    preview = kpi_api.post("/custom-stats/kpis/preview", json=revenue())
    assert preview.json() == {"statusCode": 200, "data": {"rows": []}}
    assert kpi_api.post("/custom-stats/kpis/preview", json=revenue(measures=[])).status_code == 400
    assert kpi_api.get("/custom-stats/kpis").json() == []  # a preview creates nothing
