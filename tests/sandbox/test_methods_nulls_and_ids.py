"""What the schemathesis run (``test_openapi_conformance.py``) found the sandbox doing
otherwise than its document says, each pinned here on its own: a 405 names the methods the
path takes (``Allow``); a literal path beside a template (``/v1/events/histories`` beside
``/v1/events/{id_event}``) answers a method it does not take with 405, not with the
template's 400; the keys of a data source or a list that cannot be null are refused as null,
not stored; a bulk delete reads the id ``5.0`` as the integer 5, as JSON does."""

from __future__ import annotations

import httpx
import pytest

from connectors.marketing.samples import sample_item
from tests.sandbox.errors import refused

# --- 405 and its Allow header -----------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "allow"), [
    # one path, one route per method: every route of the path is named, not the first one's
    ("DELETE", "/orders", "GET, POST, PUT"),
    ("PATCH", "/customers", "GET, POST, PUT"),
    ("POST", "/data-sources/5", "DELETE, PUT"),
    ("DELETE", "/lists", "GET, POST"),
])
def test_a_method_the_path_does_not_take_is_a_405_that_names_those_it_takes(
        api, method, path, allow):
    answer = api.request(method, path)

    assert refused(answer, 405) == ["Method Not Allowed"]
    assert answer.headers["allow"] == allow


@pytest.mark.parametrize("method", ["DELETE", "PUT"])
def test_a_literal_path_beside_a_template_answers_a_method_it_does_not_take_with_405(
        api, method):
    # /v1/events/{id_event} takes DELETE and PUT, but "histories" is no id_event
    answer = api.request(method, "/events/histories")

    assert refused(answer, 405) == ["Method Not Allowed"]
    assert answer.headers["allow"] == "GET"


def test_a_value_no_template_takes_is_still_a_400_naming_the_parameter(api):
    answer = api.delete("/events/abc")

    assert refused(answer) == [
        "id_event: Input should be a valid integer, unable to parse string as an integer"]
    assert "allow" not in answer.headers


# --- keys that cannot be null -----------------------------------------------------------


@pytest.mark.parametrize(("key", "error"), [
    ("label", "label: Input should be a valid string"),
    ("type", "type: Input should be a valid string"),
    ("is_default", "is_default: Input should be a valid boolean"),
    ("active", "active: Input should be a valid boolean"),
])
def test_a_data_source_refuses_null_for_a_key_it_always_has(api, key, error):
    created = api.post("/data-sources", json={"label": "EU shop", "type": "woocommerce"})
    source = created.json()["data"]
    route = f"/data-sources/{source['id_data_source']}"

    assert refused(api.put(route, json={key: None})) == [error]

    listed = {s["id_data_source"]: s for s in api.get("/data-sources").json()["data"]}
    assert listed[source["id_data_source"]] == source


def test_a_data_source_takes_null_for_its_parent_and_a_whole_number_as_an_integer(api):
    parent = api.post("/data-sources", json={"label": "parent", "type": "x"}).json()["data"]
    child = api.post("/data-sources", json={"label": "child", "type": "x"}).json()["data"]
    route = f"/data-sources/{child['id_data_source']}"

    moved = api.put(route, json={"parent_id": float(parent["id_data_source"])})
    assert moved.json()["data"]["parent_id"] == parent["id_data_source"]
    assert api.put(route, json={"parent_id": None}).json()["data"]["parent_id"] is None


@pytest.mark.parametrize(("key", "error"), [
    ("name", "name: Input should be a valid string"),
    ("keep_updated", "keep_updated: Input should be a valid boolean"),
])
def test_a_list_refuses_null_for_a_key_it_always_has(api, key, error):
    created = api.post("/lists", json={"name": "VIP"}).json()["data"]
    route = f"/lists/{created['id_list']}"

    assert refused(api.patch(route, json={key: None})) == [error]

    assert api.get(route).json()["data"] == created


def test_a_list_takes_null_for_its_segmentation(api):
    created = api.post("/lists", json={"name": "VIP"}).json()["data"]

    answer = api.patch(f"/lists/{created['id_list']}", json={"segmentation_config": None})

    assert answer.json()["data"]["segmentation_config"] is None


# --- the ids of a bulk delete -------------------------------------------------------------


def product_ids(api: httpx.Client) -> list[int]:
    return sorted(p["product_id"] for p in api.get("/products").json()["data"])


def test_a_bulk_delete_reads_a_whole_number_as_the_integer_it_is(api):
    saved = api.post("/products", json=[sample_item("products", product_id=101),
                                        sample_item("products", product_id=102)])
    assert saved.json()["sent_count"] == 2

    answer = api.post("/products/bulk-delete", json={"product_ids": [101.0]})

    assert answer.json()["sent_count"] == 1
    assert product_ids(api) == [102]


@pytest.mark.parametrize("bad", [101.5, True, None, 2.0**60, {"id": 101}],
                         ids=["fraction", "boolean", "null", "past-2^53", "object"])
def test_a_bulk_delete_refuses_an_id_that_is_neither_text_nor_an_integer(api, bad):
    api.post("/products", json=[sample_item("products", product_id=101)])

    errors = refused(api.post("/products/bulk-delete", json={"product_ids": ["7", bad]}))

    assert errors == ['The body must be {"product_ids": [ids]} (strings or integers)']
    assert product_ids(api) == [101]
