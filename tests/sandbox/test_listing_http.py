"""Listing over HTTP, as a person with curl would write it: each operator in both encodings."""

from __future__ import annotations

import json

import pytest

from connectors.marketing.samples import sample_item

CARRIERS = [
    ("k1", "Colissimo", True, "2026-01-01T00:00:00Z"),
    ("k2", "Chronopost", True, "2026-02-01T00:00:00Z"),
    ("k3", "DHL Express", False, "2026-03-01T00:00:00Z"),
    ("k4", "UPS", True, "2026-04-01T00:00:00Z"),
]

CASES = [
    ("EQUALS", ["k2"], "carrier_id", {"k2"}),
    ("NOT_EQUALS", ["k2"], "carrier_id", {"k1", "k3", "k4"}),
    ("CONTAINS", ["post"], "name", {"k2"}),
    ("NOT_CONTAINS", ["o"], "name", {"k3", "k4"}),
    ("STARTS_WITH", ["c"], "name", {"k1", "k2"}),
    ("ENDS_WITH", ["express"], "name", {"k3"}),
    ("LESS_THAN", ["2026-02-01T00:00:00Z"], "created_at", {"k1"}),
    ("LESS_THAN_OR_EQUAL_TO", ["2026-02-01T00:00:00Z"], "created_at", {"k1", "k2"}),
    ("GREATER_THAN", ["2026-03-01T00:00:00Z"], "created_at", {"k4"}),
    ("GREATER_THAN_OR_EQUAL_TO", ["2026-03-01T00:00:00Z"], "created_at", {"k3", "k4"}),
    ("IN", ["k1", "k4"], "carrier_id", {"k1", "k4"}),
    ("NOT_IN", ["k1", "k4"], "carrier_id", {"k2", "k3"}),
    ("LIKE", ["%o%o%"], "name", {"k1", "k2"}),
    ("BETWEEN", ["2026-01-15T00:00:00Z", "2026-03-01T00:00:00Z"], "created_at", {"k2", "k3"}),
    ("NOT_BETWEEN", ["2026-01-15T00:00:00Z", "2026-03-01T00:00:00Z"], "created_at",
     {"k1", "k4"}),
]


@pytest.fixture(scope="module")
def carriers(sandbox):
    client = sandbox.new_shop()
    client.post("/orders-carriers", json=[
        sample_item("carriers", carrier_id=cid, name=name, is_active=active, created_at=ts,
                    updated_at=ts)
        for cid, name, active, ts in CARRIERS
    ])
    return client


def bracket(field, operator, values, multi):
    params = [("filters[0][field]", field), ("filters[0][operator]", operator)]
    if multi:
        params += [(f"filters[0][values][{i}]", v) for i, v in enumerate(values)]
    else:
        params.append(("filters[0][values]", values[0]))
    return params


def as_json(field, operator, values, multi):
    return [("filters", json.dumps(
        {"field": field, "operator": operator, "values": values if multi else values[0]}))]


@pytest.mark.parametrize("encode", [bracket, as_json], ids=["brackets", "json"])
@pytest.mark.parametrize(("operator", "values", "field", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_operator_filters_the_same_in_both_encodings(
    carriers, encode, operator, values, field, expected
):
    multi = operator in {"IN", "NOT_IN", "BETWEEN", "NOT_BETWEEN"}
    answer = carriers.get("/orders-carriers", params=encode(field, operator, values, multi))
    assert answer.status_code == 200, answer.text
    assert {r["carrier_id"] for r in answer.json()["data"]} == expected


def test_multi_values_may_be_comma_separated(carriers):
    answer = carriers.get("/orders-carriers", params=[
        ("filters[0][field]", "carrier_id"), ("filters[0][operator]", "IN"),
        ("filters[0][values]", "k1,k3"),
    ])
    assert {r["carrier_id"] for r in answer.json()["data"]} == {"k1", "k3"}


def test_filters_and_or_filters_combine_as_all_and_any(carriers):
    answer = carriers.get("/orders-carriers", params=[
        ("filters", json.dumps({"field": "is_active", "operator": "EQUALS", "value": True})),
        ("orFilters", json.dumps({"field": "carrier_id", "operator": "EQUALS", "value": "k1"})),
        ("orFilters", json.dumps({"field": "name", "operator": "EQUALS", "value": "UPS"})),
    ])
    assert {r["carrier_id"] for r in answer.json()["data"]} == {"k1", "k4"}


def test_pages_walk_to_the_end_and_past_it(carriers):
    first = carriers.get("/orders-carriers", params={"limit": 3}).json()
    last = carriers.get("/orders-carriers", params={"limit": 3, "offset": 3}).json()
    past = carriers.get("/orders-carriers", params={"limit": 3, "offset": 10}).json()

    assert [r["carrier_id"] for r in first["data"] + last["data"]] == ["k1", "k2", "k3", "k4"]
    assert first["meta"]["pagination"] | {} == {
        "total_items": 4, "items_per_page": 3, "total_pages": 2, "current_page": 1,
        "offset": 0, "has_previous_page": False, "has_next_page": True, "next_page": 2,
        "previous_page": None,
    }
    assert last["meta"]["pagination"]["has_next_page"] is False
    assert past["data"] == []


@pytest.mark.parametrize("limit", ["0", "-5", "abc", "1001"])
def test_a_limit_out_of_range_is_a_clear_400(carriers, limit):
    answer = carriers.get("/orders-carriers", params={"limit": limit})
    assert answer.status_code == 400
    assert "limit" in answer.json()["message"]


def test_unknown_fields_and_operators_are_named(carriers):
    answer = carriers.get("/orders-carriers", params=[
        ("fields", "carrier_id,colour"),
        ("filters[0][field]", "carrier_id"), ("filters[0][operator]", "ROUGHLY"),
        ("filters[0][value]", "x"),
    ])
    message = answer.json()["message"]
    assert answer.status_code == 400
    assert "'colour'" in message
    assert "'ROUGHLY'" in message


def test_fields_may_be_repeated_or_comma_separated(carriers):
    repeated = carriers.get("/orders-carriers", params=[("fields", "carrier_id"),
                                                        ("fields", "name")]).json()
    joined = carriers.get("/orders-carriers", params={"fields": "carrier_id,name"}).json()
    assert repeated["data"] == joined["data"]
    assert set(joined["data"][0]) == {"carrier_id", "name"}


def test_order_sorts_in_both_encodings(carriers):
    brackets = carriers.get("/orders-carriers", params=[
        ("order[0][field]", "name"), ("order[0][type]", "desc")]).json()
    as_json = carriers.get("/orders-carriers", params=[
        ("order", json.dumps({"field": "name", "type": "desc"}))]).json()
    names = [r["name"] for r in brackets["data"]]
    assert names == ["UPS", "DHL Express", "Colissimo", "Chronopost"]
    assert [r["name"] for r in as_json["data"]] == names
