"""The sandbox describes itself with OpenAPI at a documented path: every route's body, query
parameters and answers, the error statuses it sends and no other. (That the sandbox does
what the document says is ``test_openapi_conformance.py``'s.)"""

from __future__ import annotations

from functools import cache
from typing import Any

import httpx
import pytest

from sandbox.marketing.app import create_app
from sandbox.marketing.settings import SandboxSettings
from sandbox.marketing.views import ORDER_FIELDS

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
ERROR_SHAPE = {"$ref": "#/components/schemas/ErrorBody"}


@cache
def document(*, fault_rate: float = 0.0, manual_clock: bool = False) -> dict[str, Any]:
    """The document of a sandbox started so (built once: half a second each)."""
    settings = SandboxSettings(fault_rate=fault_rate, manual_clock=manual_clock)
    return create_app(settings).openapi()


def operations(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(method, path): op for path, item in spec["paths"].items()
            for method, op in item.items()}


def statuses(spec: dict[str, Any], method: str, path: str) -> list[str]:
    return sorted(spec["paths"][path][method]["responses"])


def test_openapi_lists_every_endpoint_of_the_spec_table(sandbox):
    paths = httpx.get(sandbox.root + "/openapi.json").json()["paths"]
    missing = [(m, p) for m, p in SPEC_TABLE if m not in paths.get(p, {})]
    assert missing == []


def test_bulk_writes_declare_their_item_schema_limit_and_an_example(sandbox):
    spec = httpx.get(sandbox.root + "/openapi.json").json()
    body = spec["paths"]["/v1/customers"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["maxItems"] == 50
    # an invalid item is rejected alone (rejected_items), so any item is taken
    assert body["schema"]["items"]["anyOf"][0] == {"$ref": "#/components/schemas/Customer"}
    assert "email" in spec["components"]["schemas"]["Customer"]["required"]
    assert body["example"][0]["customer_id"] == "c-1001"
    assert spec["components"]["securitySchemes"]["apiKey"]["name"] == "spm-api-key"


def test_every_operation_declares_the_schema_of_its_success_and_of_its_errors():
    for (method, path), op in operations(document(manual_clock=True)).items():
        answers = op["responses"]
        assert answers["200"]["content"]["application/json"]["schema"], (method, path)
        for status, answer in answers.items():
            if status != "200":
                assert answer["content"]["application/json"]["schema"] == ERROR_SHAPE


def test_no_operation_documents_a_422_which_the_sandbox_never_sends():
    assert [key for key, op in operations(document()).items() if "422" in op["responses"]] == []


@pytest.mark.parametrize(("method", "path", "sent"), [
    # a key, and nothing in the request that can be wrong
    ("get", "/v1/data-sources", ["200", "401"]),
    ("get", "/v1/customers/{customer_id}", ["200", "401", "404"]),
    # a body: not JSON (400), too large (413), of another type (415)
    ("post", "/v1/data-sources", ["200", "400", "401", "413", "415"]),
    # an integer in the path, and what it names may not exist
    ("get", "/v1/events/{id_event}", ["200", "400", "401", "404"]),
    ("post", "/v1/events", ["200", "400", "401", "409", "413", "415"]),
    # not an API route: faults are never injected there
    ("get", "/_sandbox/stats", ["200", "401"]),
    ("get", "/_sandbox/arrivals", ["200", "401"]),
])
def test_an_operation_documents_the_statuses_it_sends(method, path, sent):
    assert statuses(document(), method, path) == sent


def test_injected_faults_are_documented_when_the_sandbox_injects_them():
    faulty = document(fault_rate=0.1)

    assert statuses(faulty, "get", "/v1/data-sources") == [
        "200", "401", "429", "500", "502", "503"]
    assert "Retry-After" in faulty["paths"]["/v1/orders"]["get"]["responses"]["429"]["headers"]
    assert statuses(faulty, "get", "/_sandbox/stats") == ["200", "401"]
    assert statuses(faulty, "get", "/_sandbox/arrivals") == ["200", "401"]


def test_the_kpi_endpoints_take_their_own_key():
    spec = document()
    kpi = spec["paths"]["/v1/custom-stats/kpis"]["get"]
    assert kpi["security"] == [{"kpiKey": []}]
    assert spec["paths"]["/v1/orders"]["get"]["security"] == [{"apiKey": []}]
    assert spec["components"]["securitySchemes"]["kpiKey"]["name"] == "spm-api-key"


def test_a_listing_declares_the_listing_language_on_its_own_fields():
    spec = document()
    params = {p["name"]: p for p in spec["paths"]["/v1/orders"]["get"]["parameters"]}
    assert sorted(params) == ["fields", "filters", "limit", "offset", "orFilters", "order"]
    assert params["limit"]["schema"]["maximum"] == 1000
    # JSON in the parameter is declared; bracket notation is described
    assert "application/json" in params["filters"]["content"]
    assert "filters[0][field]=" in params["filters"]["description"]
    assert spec["components"]["schemas"]["OrderField"]["enum"] == list(ORDER_FIELDS)
    # each operator with the values it takes: BETWEEN two, IN at least one
    two = spec["components"]["schemas"]["TwoValues"]["anyOf"][0]
    assert (two["minItems"], two["maxItems"]) == (2, 2)


def test_the_event_listings_declare_their_settings_object():
    params = document()["paths"]["/v1/events"]["get"]["parameters"]
    settings = next(p for p in params if p["name"] == "settings")
    schema = settings["content"]["application/json"]["schema"]
    assert sorted(schema["properties"]) == ["filter", "limit", "offset", "order"]
    assert schema["additionalProperties"] is False


def test_a_listing_answers_the_list_envelope_of_its_rows():
    schemas = document()["components"]["schemas"]
    page = schemas["OrderRowPage"]
    assert sorted(page["properties"]) == ["data", "meta", "statusCode"]
    assert page["properties"]["data"]["items"] == {"$ref": "#/components/schemas/OrderRow"}
    # a row holds the fields asked for (`fields`), any of them null
    assert sorted(schemas["OrderRow"]["properties"]) == sorted(ORDER_FIELDS)
    assert schemas["OrderRow"].get("required", []) == []
