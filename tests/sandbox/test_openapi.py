"""The sandbox describes itself with OpenAPI at a documented path."""

from __future__ import annotations

import httpx

SPEC_TABLE = [
    ("get", "/v1/data-sources"),
    ("post", "/v1/custom-stats/kpis"),
    ("get", "/v1/custom-stats/kpis"),
    ("get", "/v1/contacts/all"),
    ("get", "/v1/orders"),
    ("get", "/v1/orders-statuses"),
    ("get", "/v1/custom-data-records/{id_definition}"),
    ("get", "/v1/lists/{id_list}/contacts"),
    ("get", "/v1/custom-data-definitions/overrides"),
    ("get", "/v1/events"),
    ("get", "/v1/events/histories"),
    ("post", "/v1/events"),
    ("post", "/v1/events/trigger/{code_name}"),
]


def test_openapi_lists_every_endpoint_of_the_spec_table(sandbox):
    paths = httpx.get(sandbox.root + "/openapi.json").json()["paths"]
    missing = [(m, p) for m, p in SPEC_TABLE if m not in paths.get(p, {})]
    assert missing == []


def test_bulk_writes_declare_their_item_schema_limit_and_an_example(sandbox):
    spec = httpx.get(sandbox.root + "/openapi.json").json()
    body = spec["paths"]["/v1/customers"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["maxItems"] == 50
    assert body["schema"]["items"] == {"$ref": "#/components/schemas/Customer"}
    assert "email" in spec["components"]["schemas"]["Customer"]["required"]
    assert body["example"][0]["customer_id"] == "c-1001"
    assert spec["components"]["securitySchemes"]["apiKey"]["name"] == "spm-api-key"
