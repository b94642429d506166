"""What one request may carry: a body of at most ``MAX_BODY_BYTES`` (413), JSON only (415), and
a bounded number of items on every bulk route — each refusal in the API's error shape."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from connectors.marketing.resources import CUSTOM_DATA_RECORDS_MAX_BATCH, SYNC_RESOURCES
from connectors.marketing.samples import sample_item
from pipelines.engine import limits as engine
from sandbox.marketing.limits import MAX_BODY_BYTES, MAX_DELETE_IDS, MAX_DEPTH, MAX_MEMBERS

JSON = {"content-type": "application/json"}


def refused(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert (body["statusCode"], body["success"], body["errors"]) == (status, False,
                                                                   [body["message"]])
    return body["message"]


def padded(size: int) -> bytes:
    """An empty JSON array of exactly ``size`` bytes."""
    return b"[" + b" " * (size - 2) + b"]"


def test_a_body_over_the_limit_is_a_413_and_the_client_can_go_on(api):
    message = refused(api.post("/customers", content=padded(MAX_BODY_BYTES + 1), headers=JSON),
                      413)

    assert message == (f"The request body is larger than the {MAX_BODY_BYTES:,} bytes this API"
                       " takes: send fewer items per request")
    assert api.post("/customers", json=[sample_item("customers")]).json()["sent_count"] == 1


def test_a_body_sent_in_chunks_is_cut_off_once_it_passes_the_limit(api):
    """No Content-Length to go by: the sandbox counts what arrives."""
    def chunks() -> Iterator[bytes]:
        yield b"["
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536
        yield b"]"

    refused(api.post("/customers", content=chunks(), headers=JSON), 413)
    assert api.get("/customers").status_code == 200


def test_a_body_of_exactly_the_limit_is_read(api):
    answer = api.post("/customers", content=padded(MAX_BODY_BYTES), headers=JSON)
    assert answer.json()["sent_count"] == 0


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "", "application/jsonx"],
)
def test_a_body_that_is_not_sent_as_json_is_a_415(api, content_type):
    answer = api.post("/customers", content=b"[]", headers={"content-type": content_type})

    message = refused(answer, 415)

    assert message == ("The request body must be JSON, sent with Content-Type: application/json"
                       f" (got {content_type or 'none'})")


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"])
def test_json_is_taken_with_any_parameters_and_as_a_json_suffix(api, content_type):
    answer = api.post("/customers", json=None, content=b"[]",
                      headers={"content-type": content_type})
    assert answer.status_code == 200, answer.text


def test_requests_without_a_body_need_no_content_type(api):
    assert api.get("/customers", headers={"content-type": "text/plain"}).status_code == 200
    assert api.delete("/events/1").status_code == 200


def bulk_delete_route(name: str) -> str:
    resource = SYNC_RESOURCES[name]
    parent = "1" if resource.parent_field else None
    return f"/{resource.item_route(parent)}/bulk-delete"


@pytest.mark.parametrize("name", SYNC_RESOURCES)
def test_every_bulk_delete_takes_at_most_the_limit_of_ids(api, name):
    key = SYNC_RESOURCES[name].delete_key
    ids = [str(i) for i in range(MAX_DELETE_IDS + 1)]

    message = refused(api.post(bulk_delete_route(name), json={key: ids}), 400)

    assert message == (f"A bulk delete takes at most {MAX_DELETE_IDS} ids; got"
                       f" {MAX_DELETE_IDS + 1}. Split it into smaller requests.")
    exactly = api.post(bulk_delete_route(name), json={key: ids[:MAX_DELETE_IDS]})
    assert exactly.json()["sent_count"] == MAX_DELETE_IDS


def test_custom_data_records_are_saved_and_deleted_in_bounded_batches(api):
    definition = api.post("/custom-data-definitions", json={
        "name": "notes", "fields": [{"name": "text", "type": "text"}]}).json()["data"]
    route = f"/custom-data-records/{definition['id']}"

    too_many = [{"text": str(i)} for i in range(CUSTOM_DATA_RECORDS_MAX_BATCH + 1)]
    assert "at most" in refused(api.post(route, json=too_many), 400)
    ids = list(range(1, MAX_DELETE_IDS + 2))
    assert "at most 1000 ids" in refused(api.post(f"{route}/bulk-delete", json=ids), 400)
    assert api.post(f"{route}/bulk-delete", json=ids[:-1]).json()["sent_count"] == 1000


def test_the_engines_item_bounds_fit_inside_the_sandboxs():
    """An item within the engine's bounds is sent; the sandbox must not refuse it whole for
    its shape (a batch body is an array of items: one level and one item count more)."""
    assert engine.MAX_DEPTH + 1 < MAX_DEPTH
    assert engine.MAX_VALUES <= MAX_MEMBERS


def test_an_order_of_ten_thousand_and_one_lines_is_taken(api):
    order = sample_item("orders")
    order["products"] = [dict(order["products"][0]) for _ in range(10_001)]

    answer = api.post("/orders", json=[order])

    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["sent_count"] == 1
