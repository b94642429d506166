"""Input made to break the server — ids that are not numbers, numbers past 64 bits, JSON nested
hundreds deep, addresses that take a naive matcher minutes — is answered with a 4xx in the
API's error shape, never a 500, and nothing is stored that cannot be read back."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from connectors.marketing.samples import sample_item
from sandbox.marketing.limits import MAX_CLOCK_ADVANCE, MAX_DEPTH, MAX_MEMBERS
from tests.sandbox.errors import refused
from tests.sandbox.routes import api_routes

HANG = 10.0  # seconds: "does not hang", far above the milliseconds it takes
PAST_64_BITS = str(2**64)


def nested(depth: int, leaf: Any = 1) -> Any:
    """``leaf`` inside ``depth`` objects."""
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


def without(item: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != key}


# --- ids and numbers in paths and query strings ---------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT"])
@pytest.mark.parametrize("resource", ["images", "variations"])
def test_a_parent_id_that_is_not_a_number_is_a_400_naming_it(api, method, resource):
    item = without(sample_item(resource), "product_id")

    errors = refused(api.request(method, f"/products/abc/{resource}", json=[item]))

    assert errors == ["product_id (in the path): must be an integer from 0 to"
                      f" {2**63 - 1}, got 'abc'"]


@pytest.mark.parametrize("parent", ["abc", PAST_64_BITS, "-1", "1.5"])
def test_every_route_under_a_numeric_parent_checks_it(api, parent):
    base = f"/products/{parent}/images"
    answers = [api.get(base), api.post(f"{base}/bulk-delete", json={"image_ids": [1]}),
               api.post(base, json=[sample_item("images")])]
    for answer in answers:
        assert "product_id (in the path)" in refused(answer)[0]


def test_a_numeric_parent_id_is_read_as_its_number(api):
    image = sample_item("images", product_id=101)
    assert api.post("/products/0101/images", json=[image]).json()["sent_count"] == 1
    assert len(api.get("/products/101/images").json()["data"]) == 1


@pytest.mark.parametrize("scope", ["abc", PAST_64_BITS, "1.5", ""])
def test_bulk_delete_with_a_data_source_that_is_not_an_integer_is_a_400(api, scope):
    answer = api.post(f"/orders/bulk-delete?id_data_source={scope}", json={"order_ids": ["1"]})
    assert refused(answer)[0].startswith("id_data_source: must be an integer")


def test_bulk_delete_scoped_to_a_data_source_still_deletes(api):
    api.post("/orders", json=[sample_item("orders")])
    assert api.post("/orders/bulk-delete?id_data_source=1",
                    json={"order_ids": ["o-9001"]}).json()["sent_count"] == 1
    assert api.get("/orders").json()["data"] == []


@pytest.mark.parametrize("offset", [PAST_64_BITS, "9" * 5000])
def test_an_offset_past_the_bound_is_a_400(api, offset):
    errors = refused(api.get("/orders", params={"offset": offset}))
    assert errors[0].startswith("offset must be an integer between 0 and")


def _hostile_calls() -> list[tuple[str, str]]:
    """(method, path) of every route with a path parameter, for each value a path
    parameter should not have."""
    values = ["abc", PAST_64_BITS, "9" * 5000, "-1", "1e3", "%C3%A9"]
    calls = []
    for route in api_routes():
        if "{" not in route.path:
            continue
        for value, method in ((v, m) for v in values for m in sorted(route.methods or ())):
            calls.append((method, re.sub(r"\{[^}]+\}", value, route.path)))
    return calls


def test_no_path_parameter_makes_any_route_fail(api, kpi_api):
    calls = _hostile_calls()
    failed = []
    for method, path in calls:
        client = kpi_api if path.startswith("/v1/custom-stats/") else api
        body: dict[str, Any] | None = {} if method in ("POST", "PUT", "PATCH") else None
        answer = client.request(method, api.base_url.join(path.removeprefix("/v1/")),
                                json=body)
        if answer.status_code >= 500 or answer.json().get("statusCode") != answer.status_code:
            failed.append(f"{method} {path[:60]}: {answer.status_code} {answer.text[:100]}")

    assert len(calls) > 200
    assert failed == []


def test_a_record_id_that_is_not_a_positive_64_bit_integer_is_refused(api):
    definition = api.post("/custom-data-definitions", json={
        "name": "notes", "fields": [{"name": "text", "type": "text"}]}).json()["data"]
    route = f"/custom-data-records/{definition['id']}"
    for value in (PAST_64_BITS, "9" * 5000, "²", "0"):
        assert "id: query parameter is required" in refused(api.delete(route, params={"id": value}))[0]
    assert refused(api.post(f"{route}/bulk-delete", json=[2**63]))[0].startswith("The body must be")


# --- nesting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 252, 300, 100_000])
def test_a_body_nested_past_the_bound_is_a_400(api, depth):
    body = ("[" * depth + "]" * depth).encode()

    errors = refused(api.post("/customers", content=body,
                              headers={"content-type": "application/json"}))

    assert re.search(r"nested more than 64 levels deep|depth limit exceeded", errors[0])


def test_a_body_nested_to_the_bound_is_read(api):
    answer = api.post("/customers", content=("[" * MAX_DEPTH + "]" * MAX_DEPTH).encode(),
                      headers={"content-type": "application/json"})
    assert answer.json()["rejected_items"][0]["errors"] == ["item: must be a JSON object"]


def test_an_event_trigger_with_a_json_field_nested_253_deep_is_a_400(api):
    api.post("/events", json={"name": "Blob", "code_name": "Blob",
                              "properties": {"customData": [{"name": "blob", "type": "json"}]}})
    fired = {"contact": {"email": "a@example.com"}, "customData": {"blob": nested(253)}}

    errors = refused(api.post("/events/trigger/Blob", json=fired))

    assert len(errors) == 1
    assert errors[0].startswith("body.customData.blob.a.a.a")
    assert errors[0].endswith("...: nested more than 64 levels deep")
    fired["customData"]["blob"] = nested(10)
    assert api.post("/events/trigger/Blob", json=fired).status_code == 200
    assert api.get("/events/histories").status_code == 200


def test_a_custom_data_record_nested_300_deep_is_refused_when_written_not_when_read(api):
    definition = api.post("/custom-data-definitions", json={
        "name": "blobs", "fields": [{"name": "blob", "type": "json"}]}).json()["data"]
    route = f"/custom-data-records/{definition['id']}"

    refused(api.post(route, json=[{"blob": nested(300)}]))
    assert api.post(route, json=[{"blob": nested(50)}]).json()["sent_count"] == 1

    answer = api.get(route)
    assert answer.status_code == 200
    assert len(answer.json()["data"]) == 1


@pytest.mark.parametrize("shape", ["array", "object"])
def test_an_array_or_object_with_too_many_members_is_a_400(api, shape):
    members: Any = [0] * (MAX_MEMBERS + 1)
    if shape == "object":
        members = {f"k{i}": 0 for i in range(MAX_MEMBERS + 1)}
    errors = refused(api.post("/customers", json=[{"custom": members}]))
    assert errors == [f"body[0].custom: {MAX_MEMBERS + 1:,} members, more than the"
                      f" {MAX_MEMBERS:,} an array or object may have"]


# --- text a naive matcher spends minutes on ---------------------------------------------------


def test_customers_whose_email_takes_a_backtracking_matcher_minutes_are_rejected_at_once(api):
    """``[^@\\s]+@[^@\\s]+\\.[^@\\s]+`` tries every dot of such a domain against every other."""
    batch = [sample_item("customers", customer_id=f"e{i}", email="a@" + "." * 90_000 + "@")
             for i in range(50)]

    started = time.monotonic()
    body = api.post("/customers", json=batch).json()

    assert time.monotonic() - started < HANG
    assert body["rejected_count"] == 50
    assert "is not a well-formed email address" in body["rejected_items"][0]["errors"][0]


def test_the_manual_clock_cannot_be_moved_past_what_dates_can_say(start):
    running = start("--manual-clock")
    client = running.client()
    clock = running.root + "/_sandbox/clock"

    for advance in (1e300, MAX_CLOCK_ADVANCE + 1):
        assert client.post(clock, json={"advance": advance}).status_code == 400
    for _ in range(1000):  # ten years at a time, up to the end of the calendar
        answer = client.post(clock, json={"advance": MAX_CLOCK_ADVANCE})
        if answer.status_code != 200:
            break
    assert refused(answer) == ["advance: the clock would pass the year 9999"]
    assert client.get("/orders").status_code == 200
