"""The fake Shopify shop over real localhost HTTP: the wire format a connector relies on
(the GraphQL envelope with ``extensions.cost``, GIDs and money strings, keyset cursors,
search syntax and its timezone trap, sort keys), the cost bucket (THROTTLED with HTTP 200,
MAX_COST_EXCEEDED), bulk operations (state machine, JSONL with ``__parentId``, concurrency,
empty results, injected failures), auth and API versions, deletion events, faults."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from sandbox.shops.shopify.launch import RunningFakeShopify
from sandbox.shops.shopify.launch import start_in_thread as start
from tests.support import eventually

RUN = ("mutation($q: String!) { bulkOperationRunQuery(query: $q) { bulkOperation { id status }"
       " userErrors { field message code } } }")
POLL = ("query($id: ID!) { node(id: $id) { ... on BulkOperation { id status errorCode objectCount"
        " rootObjectCount url partialDataUrl } } }")


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShopify]:
    running = start("--orders", "120", "--customers", "20", "--products", "10",
                    "--bucket-size", "100000", "--restore-rate", "100000", "--bulk-latency", "0")
    yield running
    running.stop()


def bulk(shop: RunningFakeShopify, query: str) -> dict[str, Any]:
    """Run a bulk query and poll it, as a client does, until it is done."""
    started = shop.graphql(RUN, {"q": query})["data"]["bulkOperationRunQuery"]
    assert started["userErrors"] == [], started

    def finished() -> dict[str, Any] | None:
        node = shop.graphql(POLL, {"id": started["bulkOperation"]["id"]})["data"]["node"]
        return node if node["status"] not in ("CREATED", "RUNNING") else None

    return eventually(finished, "the bulk operation finishing")


def test_every_answer_carries_its_cost_and_the_bucket(shop: RunningFakeShopify) -> None:
    answer = shop.graphql("{ orders(first: 2) { nodes { id totalPriceSet { shopMoney { amount"
                          " currencyCode } } customer { numberOfOrders } } } }")
    cost = answer["extensions"]["cost"]
    assert cost["requestedQueryCost"] == 2 + 2 * (1 + 2 + 1)
    assert 0 < cost["actualQueryCost"] <= cost["requestedQueryCost"]
    assert set(cost["throttleStatus"]) == {"maximumAvailable", "currentlyAvailable", "restoreRate"}
    order = answer["data"]["orders"]["nodes"][0]
    assert order["id"].startswith("gid://shopify/Order/")
    assert isinstance(order["totalPriceSet"]["shopMoney"]["amount"], str)  # Money is a string
    if order["customer"]:
        assert order["customer"]["numberOfOrders"].isdigit()  # UnsignedInt64 is a string too


def test_keyset_cursors_read_ties_across_pages_once(shop: RunningFakeShopify) -> None:
    seen, after = [], None
    while True:
        page = shop.graphql("query($a: String) { orders(first: 7, after: $a, sortKey: UPDATED_AT)"
                            " { pageInfo { hasNextPage endCursor } nodes { id updatedAt } } }",
                            {"a": after})["data"]["orders"]
        seen += page["nodes"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    ids = [n["id"] for n in seen]
    assert len(ids) == len(set(ids)) == 120
    assert max(Counter(n["updatedAt"] for n in seen).values()) > 7  # a bulk edit: ties > page
    keys = [(n["updatedAt"], int(n["id"].rsplit("/", 1)[1])) for n in seen]
    assert keys == sorted(keys)
    empty = shop.graphql("{ orders(first: 5, query: \"updated_at:<'2000-01-01T00:00:00Z'\") {"
                         " pageInfo { hasNextPage endCursor } nodes { id } } }")["data"]["orders"]
    assert empty == {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": []}


def test_page_sizes_sort_keys_and_unknown_fields_are_refused(shop: RunningFakeShopify) -> None:
    too_big = shop.graphql("{ orders(first: 251) { nodes { id } } }")
    assert "250" in too_big["errors"][0]["message"] and "data" not in too_big
    no_size = shop.graphql("{ orders { nodes { id } } }")
    assert no_size["errors"][0]["message"] == "you must provide one of first or last"
    unsorted = shop.graphql("{ abandonedCheckouts(first: 5, sortKey: UPDATED_AT) { nodes { id } } }")
    assert unsorted["errors"][0]["extensions"]["code"] == "argumentLiteralsIncompatible"
    assert "AbandonedCheckoutSortKeys" in unsorted["errors"][0]["message"]
    unknown = shop.graphql("{ orders(first: 1) { nodes { id colour } } }")
    assert unknown["errors"][0]["message"] == "Field 'colour' doesn't exist on type 'Order'"


def test_search_dates_without_an_offset_are_shop_local(shop: RunningFakeShopify) -> None:
    first = shop.graphql("{ orders(first: 1, sortKey: UPDATED_AT) { nodes { updatedAt } } }")
    at = first["data"]["orders"]["nodes"][0]["updatedAt"]  # e.g. 2024-01-01T10:00:00Z

    def count(value: str) -> int:
        query = "query($q: String) { ordersCount(query: $q) { count } }"
        return shop.graphql(query, {"q": f"updated_at:<='{value}'"})["data"]["ordersCount"]["count"]

    assert count(at) >= 1
    # the same wall-clock text without Z is Paris time, an hour or two earlier in UTC
    assert count(at.removesuffix("Z")) < count(at)
    warned = shop.graphql("{ orders(first: 1, query: \"colour:red\") { nodes { id } } }")
    assert warned["extensions"]["search"][0]["warnings"] == [
        {"field": "colour", "message": "Invalid search field for this query."}]
    broken = shop.graphql("{ orders(first: 1, query: \"updated_at:>\") { nodes { id } } }")
    assert broken["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


def test_auth_and_api_versions(shop: RunningFakeShopify) -> None:
    query = {"query": "{ shop { name } }"}
    refused = shop.client(token="shpat_wrong").post("/admin/api/2025-10/graphql.json", json=query)
    assert refused.status_code == 401
    assert refused.json() == {"errors": "[API] Invalid API key or access token (unrecognized"
                                        " login or wrong password)"}
    old = shop.client().post("/admin/api/2023-04/graphql.json", json=query)
    assert old.status_code == 200 and old.headers["x-shopify-api-version"] == "2025-01"
    assert shop.client().post("/admin/api/2025-13/graphql.json", json=query).status_code == 404


def test_cost_limits_refuse_and_throttle_with_http_200() -> None:
    small = start("--orders", "30", "--customers", "5", "--products", "5",
                  "--bucket-size", "100", "--restore-rate", "1")
    try:
        dear = small.graphql("{ orders(first: 250) { nodes { id lineItems(first: 10) { nodes {"
                             " id variant { id } } } } } }")
        assert dear["errors"][0]["extensions"]["code"] == "MAX_COST_EXCEEDED"
        assert dear["errors"][0]["message"].startswith(
            "Query cost is 5752, which exceeds the single query max cost limit (1000).")
        answer = small.client().post("/admin/api/2025-10/graphql.json", json={
            "query": "{ orders(first: 60) { nodes { id customer { id } } } }"})
        assert answer.status_code == 200
        body = answer.json()
        assert body["errors"][0]["extensions"]["code"] == "THROTTLED"
        assert body["extensions"]["cost"]["actualQueryCost"] is None
        assert body["extensions"]["cost"]["throttleStatus"]["maximumAvailable"] == 100.0
        assert small.fake().get("/stats").json()["throttled"] == 1
    finally:
        small.stop()


def test_bulk_results_are_flat_jsonl_with_parent_ids(shop: RunningFakeShopify) -> None:
    done = bulk(shop, "{ orders(sortKey: UPDATED_AT) { edges { node { id name lineItems {"
                      " edges { node { id quantity } } } } } } }")
    assert done["status"] == "COMPLETED" and done["rootObjectCount"] == "120"
    lines = [orjson.loads(line) for line in httpx.get(done["url"]).content.splitlines()]
    assert len(lines) == int(done["objectCount"])
    roots = {line["id"] for line in lines if "__parentId" not in line}
    children = [line for line in lines if "__parentId" in line]
    assert len(roots) == 120 and children
    assert all(c["__parentId"] in roots and c["id"].startswith("gid://shopify/LineItem/")
               for c in children)
    seen: set[str] = set()
    for line in lines:  # every child comes after its parent
        assert line.get("__parentId") in (None, *seen)
        seen.add(line["id"])
    empty = bulk(shop, "{ orders(query: \"updated_at:<'2001-01-01T00:00:00Z'\") { edges { node"
                       " { id } } } }")
    assert (empty["status"], empty["url"], empty["objectCount"]) == ("COMPLETED", None, "0")


def test_bulk_concurrency_and_shape_are_checked(shop: RunningFakeShopify) -> None:
    shop.fake().post("/bulk/occupy", json={})  # without polls: runs until cancelled
    busy = shop.graphql(RUN, {"q": "{ orders { edges { node { id } } } }"})
    error = busy["data"]["bulkOperationRunQuery"]["userErrors"][0]
    assert error["code"] == "OPERATION_IN_PROGRESS"
    assert error["message"].startswith("A bulk query operation for this app and shop is already"
                                       " in progress: gid://shopify/BulkOperation/")
    current = shop.graphql("{ currentBulkOperation { id status } }")["data"]["currentBulkOperation"]
    shop.graphql("mutation($id: ID!) { bulkOperationCancel(id: $id) { userErrors { message } } }",
                 {"id": current["id"]})
    deep = shop.graphql(RUN, {"q": "{ products { edges { node { id collections { edges { node {"
                                   " id products { edges { node { id variants { edges { node {"
                                   " id } } } } } } } } } } } } }"})
    error = deep["data"]["bulkOperationRunQuery"]["userErrors"][0]
    assert error["code"] == "INVALID"
    assert error["message"] == ("Bulk queries cannot contain connections with a nesting depth"
                                " greater than 2.")


@pytest.mark.parametrize(("fault", "status", "code"), [
    ("timeout", "FAILED", "TIMEOUT"), ("access_denied", "FAILED", "ACCESS_DENIED"),
    ("truncated", "COMPLETED", None)])
def test_injected_bulk_failures(shop: RunningFakeShopify, fault: str, status: str,
                                code: str | None) -> None:
    shop.fake().post("/bulk/faults", json={"faults": [fault]})
    done = bulk(shop, "{ customers { edges { node { id } } } }")
    assert (done["status"], done["errorCode"]) == (status, code)
    if fault == "timeout":
        partial = httpx.get(done["partialDataUrl"]).content.splitlines()
        assert 0 < len(partial) < 20 and done["url"] is None
    if fault == "truncated":
        assert len(httpx.get(done["url"]).content.splitlines()) < int(done["objectCount"])


def test_deletions_leave_destroy_events(shop: RunningFakeShopify) -> None:
    fake = shop.fake()
    product_id = fake.get("/products/ids").json()["ids"][-1]
    fake.delete(f"/products/{product_id}")
    events = shop.graphql("{ events(first: 50, query: \"action:destroy AND subject_type:PRODUCT\")"
                          " { nodes { ... on BasicEvent { action subjectType subjectId } } } }")
    subjects = [e["subjectId"] for e in events["data"]["events"]["nodes"]]
    assert f"gid://shopify/Product/{product_id}" in subjects
    assert len(subjects) == 2  # and one deletion from the generated history
    gone = shop.graphql(f'{{ product(id: "gid://shopify/Product/{product_id}") {{ id }} }}')
    assert gone["data"]["product"] is None


def test_a_deleted_variant_leaves_its_product() -> None:
    shop = start("--orders", "0", "--customers", "0", "--products", "3")
    try:
        query = "{ products(first: 1) { nodes { id variants(first: 20) { nodes { id } } } } }"
        before = shop.graphql(query)["data"]["products"]["nodes"][0]
        variants = [v["id"] for v in before["variants"]["nodes"]]
        shop.fake().delete(f"/variants/{variants[0].rsplit('/', 1)[1]}")
        after = shop.graphql(query)["data"]["products"]["nodes"][0]
        assert [v["id"] for v in after["variants"]["nodes"]] == variants[1:]
    finally:
        shop.stop()


def test_events_are_made_by_deletions_not_created(shop: RunningFakeShopify) -> None:
    refused = shop.fake().post("/events", json={})
    assert refused.status_code == 400
    assert "DELETE /__fake__/{resource}/{id}" in refused.json()["error"]


def test_the_control_api_has_no_arrivals_without_a_hosting_gate(shop: RunningFakeShopify) -> None:
    # no such route (only POST /{resource} has the path), not a 500 from a missing log
    assert shop.fake().get("/arrivals").status_code == 405


def test_the_same_seed_gives_the_same_shop(shop: RunningFakeShopify) -> None:
    other = start("--orders", "120", "--customers", "20", "--products", "10")
    try:
        query = "{ orders(first: 20) { nodes { id name updatedAt totalPriceSet { shopMoney { amount } } } } }"
        assert other.graphql(query)["data"] == shop.graphql(query)["data"]
    finally:
        other.stop()


def test_faults_are_transient_answers() -> None:
    faulty = start("--orders", "5", "--fault-rate", "1", "--retry-after", "0")
    try:
        statuses = Counter()
        for _ in range(24):
            answer = faulty.client().post("/admin/api/2025-10/graphql.json",
                                          json={"query": "{ shop { name } }"})
            code = (answer.json()["errors"][0]["extensions"]["code"]
                    if answer.status_code == 200 else None)
            statuses[(answer.status_code, code)] += 1
        assert set(statuses) == {(502, None), (503, None), (500, None),
                                 (200, "INTERNAL_SERVER_ERROR")}
    finally:
        faulty.stop()
