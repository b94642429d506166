"""The fake Magento shop over real localhost HTTP: the wire format a connector relies on
(searchCriteria with filter groups, condition types, sort orders and paging, the page past
the end, input limits, ``fields``, error bodies, bearer tokens), UTC timestamps whatever the
store's timezone, the generated data's traps, the rate limit and faults, and /__fake__."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandbox.shops.magento.launch import RunningFakeMagento
from sandbox.shops.magento.launch import start_many_in_thread as start_many

MAGENTO_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


@pytest.fixture(scope="module")
def shops() -> Iterator[tuple[RunningFakeMagento, RunningFakeMagento]]:
    """The default shop (seed 0) and the same shop as Magento 2.4 with its strict settings:
    no items past the end, input limits on, integration tokens refused as bearer tokens."""
    running = start_many((), ("--past-end", "empty", "--max-page-size", "300",
                              "--no-integration-bearer"))
    yield running[0], running[1]
    for shop in running:
        shop.stop()


@pytest.fixture(scope="module")
def shop(shops: tuple[RunningFakeMagento, RunningFakeMagento]) -> RunningFakeMagento:
    return shops[0]


@pytest.fixture
def api(shop: RunningFakeMagento) -> httpx.Client:
    return shop.client()


def sc(*groups: list[tuple[str, Any, str]], sort: tuple[tuple[str, str], ...] = (),
       size: int | None = None, page: int | None = None, camel: bool = False) -> dict[str, str]:
    """searchCriteria query parameters (snake_case keys, or camelCase like some clients)."""
    fg, cond = ("filterGroups", "conditionType") if camel else ("filter_groups", "condition_type")
    params: dict[str, str] = {}
    for g, group in enumerate(groups):
        for f, (field, value, condition) in enumerate(group):
            base = f"searchCriteria[{fg}][{g}][filters][{f}]"
            params |= {f"{base}[field]": field, f"{base}[value]": str(value),
                       f"{base}[{cond}]": condition}
    for s, (field, direction) in enumerate(sort):
        params |= {f"searchCriteria[sortOrders][{s}][field]": field,
                   f"searchCriteria[sortOrders][{s}][direction]": direction}
    if size is not None:
        params["searchCriteria[pageSize]"] = str(size)
    if page is not None:
        params["searchCriteria[currentPage]"] = str(page)
    return params


def every(api: httpx.Client, path: str = "/orders") -> list[dict[str, Any]]:
    answer = api.get(path, params={"searchCriteria": ""})
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]


# searchCriteria -----------------------------------------------------------------------------

def test_search_criteria_is_required_and_the_answer_is_the_search_result_envelope(api) -> None:
    missing = api.get("/orders")
    assert missing.status_code == 400
    assert missing.json() == {"message": '"%fieldName" is required. Enter and try again.',
                              "parameters": {"fieldName": "searchCriteria"}}

    body = api.get("/orders", params=sc([("status", "complete", "eq")], size=5, page=2)).json()
    assert set(body) == {"items", "search_criteria", "total_count"}
    assert body["search_criteria"] == {
        "filter_groups": [{"filters": [{"field": "status", "value": "complete",
                                        "condition_type": "eq"}]}],
        "page_size": 5, "current_page": 2}
    assert len(body["items"]) == 5 and body["total_count"] > 10
    assert {o["status"] for o in body["items"]} == {"complete"}


def test_filters_inside_a_group_are_ored_and_groups_are_anded(api) -> None:
    orders = every(api)
    cut = sorted(o["updated_at"] for o in orders)[len(orders) // 2]
    body = api.get("/orders", params=sc(
        [("status", "closed", "eq"), ("status", "canceled", "eq")],
        [("updated_at", cut, "gteq")], size=500)).json()
    expected = {o["entity_id"] for o in orders
                if o["status"] in ("closed", "canceled") and o["updated_at"] >= cut}
    assert {o["entity_id"] for o in body["items"]} == expected
    assert body["total_count"] == len(expected) > 0


def test_the_keyset_filter_of_a_compound_position_selects_exactly_what_follows(api) -> None:
    """(updated_at > T) OR (updated_at = T AND entity_id > I), written as two groups."""
    orders = sorted(every(api), key=lambda o: (o["updated_at"], o["entity_id"]))
    middle = orders[len(orders) // 2]
    t, i = middle["updated_at"], middle["entity_id"]
    body = api.get("/orders", params=sc(
        [("updated_at", t, "gteq")], [("updated_at", t, "gt"), ("entity_id", i, "gt")],
        sort=(("updated_at", "ASC"), ("entity_id", "ASC")), size=1000)).json()
    assert [o["entity_id"] for o in body["items"]] == [
        o["entity_id"] for o in orders[len(orders) // 2 + 1:]]


@pytest.mark.parametrize(("condition", "value", "keep"), [
    ("in", "complete,closed", lambda o: o["status"] in ("complete", "closed")),
    ("nin", "complete,closed", lambda o: o["status"] not in ("complete", "closed")),
    ("neq", "complete", lambda o: o["status"] != "complete"),
    ("like", "PEND%", lambda o: o["status"].startswith("pending")),
    ("nlike", "%e", lambda o: not o["status"].endswith("e")),
])
def test_condition_types_on_text_columns_ignore_case_like_mysql(api, condition, value, keep) -> None:
    orders = every(api)
    body = api.get("/orders", params=sc([("status", value, condition)], size=1000)).json()
    assert {o["entity_id"] for o in body["items"]} == {o["entity_id"] for o in orders if keep(o)}


def test_null_and_range_conditions(api) -> None:
    orders = every(api)
    guests = api.get("/orders", params=sc([("customer_id", "", "null")], size=1000)).json()
    assert {o["entity_id"] for o in guests["items"]} == {
        o["entity_id"] for o in orders if "customer_id" not in o}
    assert all(o["customer_is_guest"] == 1 for o in guests["items"])
    ranged = api.get("/orders", params=sc([("entity_id", 10, "from")], [("entity_id", 20, "to")],
                                          [("entity_id", 15, "neq")], size=100)).json()
    assert [o["entity_id"] for o in ranged["items"]] == [i for i in range(10, 21) if i != 15]
    window = api.get("/orders", params=sc([("entity_id", 5, "gt")], [("entity_id", 8, "lt")],
                                          size=100)).json()
    assert [o["entity_id"] for o in window["items"]] == [6, 7]


def test_sort_orders_take_several_fields_and_camel_case_keys(api) -> None:
    body = api.get("/orders", params=sc([("status", "complete,closed", "in")], camel=True,
                                        sort=(("status", "DESC"), ("entity_id", "DESC")),
                                        size=1000)).json()
    keys = [(o["status"], o["entity_id"]) for o in body["items"]]
    assert keys == sorted(keys, reverse=True)
    assert {s for s, _ in keys} == {"complete", "closed"}


def test_unknown_columns_and_condition_types_are_refused(api) -> None:
    answer = api.get("/orders", params=sc([("no_such_column", "1", "eq")], size=1))
    assert answer.status_code == 400
    assert "Unknown column 'no_such_column'" in answer.json()["message"]
    assert api.get("/orders", params=sc([("status", "x", "between")])).status_code == 400


# paging -------------------------------------------------------------------------------------

def test_a_page_past_the_end_is_the_last_page_again_on_2_3_and_empty_on_2_4(shops) -> None:
    old, new = shops[0].client(), shops[1].client()
    last = old.get("/customers/search", params=sc(size=20, page=3)).json()
    past = old.get("/customers/search", params=sc(size=20, page=4)).json()
    assert last["total_count"] == 50 and len(last["items"]) == 10
    assert past["items"] == last["items"]  # asked for page 4, got page 3 again
    assert past["search_criteria"]["current_page"] == 4

    admin = new.post("/integration/admin/token",
                     json={"username": "admin", "password": "shopsync-fake-admin1"}).json()
    new.headers["authorization"] = f"Bearer {admin}"
    empty = new.get("/customers/search", params=sc(size=20, page=4)).json()
    assert empty["items"] == [] and empty["total_count"] == 50


def test_a_page_size_of_0_is_no_limit_as_in_magentos_collections(api) -> None:
    answer = api.get("/customers/search", params=sc(size=0))
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["items"]) == answer.json()["total_count"] == 50


def test_a_category_made_its_own_ancestor_still_answers() -> None:
    shop = start_many(())[0]
    try:
        api, fake = shop.client(), shop.fake()
        first = api.get("/categories/list", params=sc(size=1)).json()["items"][0]["id"]
        assert fake.put(f"/categories/{first}", json={"parent_id": first}).status_code == 200
        answer = api.get("/categories/list", params={"searchCriteria": ""})
        assert answer.status_code == 200
        looped = next(c for c in answer.json()["items"] if c["id"] == first)
        assert looped["path"] == str(first) and looped["parent_id"] == first
    finally:
        shop.stop()


def test_input_limits_cap_the_page_size_and_default_it_to_20(shops) -> None:
    strict = shops[1].client()
    admin = strict.post("/integration/admin/token",
                        json={"username": "admin", "password": "shopsync-fake-admin1"}).json()
    strict.headers["authorization"] = f"Bearer {admin}"
    refused = strict.get("/orders", params=sc(size=301))
    assert refused.status_code == 400
    assert refused.json() == {"message": "Maximum SearchCriteria pageSize is %max",
                              "parameters": {"max": 300}}
    assert len(strict.get("/orders", params={"searchCriteria": ""}).json()["items"]) == 20
    assert len(strict.get("/orders", params=sc(size=300)).json()["items"]) == 200


def test_the_same_seed_gives_the_same_shop(shops) -> None:
    first = shops[0].client().get("/orders", params=sc(size=30)).json()["items"]
    strict = shops[1].client()
    admin = strict.post("/integration/admin/token",
                        json={"username": "admin", "password": "shopsync-fake-admin1"}).json()
    strict.headers["authorization"] = f"Bearer {admin}"
    assert strict.get("/orders", params=sc(size=30)).json()["items"] == first


def test_fields_trims_the_answer_including_nested_objects(api) -> None:
    body = api.get("/products", params={**sc(size=3), "fields":
                   "items[id,sku,extension_attributes[stock_item[qty]]],total_count"}).json()
    assert set(body) == {"items", "total_count"}
    for product in body["items"]:
        assert set(product) == {"id", "sku", "extension_attributes"}
        assert set(product["extension_attributes"]) == {"stock_item"}
        assert set(product["extension_attributes"]["stock_item"]) == {"qty"}
    ids = api.get("/orders", params={**sc(size=2), "fields": "items[entity_id]"}).json()
    assert ids == {"items": [{"entity_id": 1}, {"entity_id": 2}]}


# authentication and errors ------------------------------------------------------------------

def test_a_missing_or_wrong_token_gets_the_401_naming_the_routes_acl(shop) -> None:
    for token, path, acl in ((None, "/orders", "Magento_Sales::actions_view"),
                             ("wrong", "/customers/search", "Magento_Customer::customer"),
                             ("wrong", "/carts/search", "Magento_Cart::manage")):
        answer = shop.client(token=token).get(path, params=sc(size=1))
        assert answer.status_code == 401
        assert answer.json() == {"message": "The consumer isn't authorized to access %resources.",
                                 "parameters": {"resources": acl}}


def test_admin_tokens_are_issued_for_the_right_password_and_expire_after_4_hours(shops) -> None:
    strict = shops[1]
    api = strict.client()
    assert api.get("/orders", params=sc(size=1)).status_code == 401  # integration token refused
    wrong = api.post("/integration/admin/token", json={"username": "admin", "password": "nope"})
    assert wrong.status_code == 401
    assert wrong.json()["message"].startswith("The account sign-in was incorrect")
    token = api.post("/integration/admin/token",
                     json={"username": "admin", "password": "shopsync-fake-admin1"}).json()
    admin = strict.client(token=token)
    assert admin.get("/orders", params=sc(size=1)).status_code == 200
    fake = strict.fake()
    fake.post("/clock", json={"advance": 4 * 3600 + 1})
    try:
        assert admin.get("/orders", params=sc(size=1)).status_code == 401
    finally:
        fake.post("/clock", json={"now": None})


def test_unknown_routes_ids_skus_and_stores_get_magento_errors(api, shop) -> None:
    assert api.get("/nowhere").json() == {"message": "Request does not match any route."}
    assert api.get("/orders/999999").status_code == 404
    gone = api.get("/customers/999999")
    assert gone.json() == {"message": "No such entity with %fieldName = %fieldValue",
                           "parameters": {"fieldName": "customerId", "fieldValue": 999999}}
    assert api.get("/products/NO-SUCH-SKU").json()["message"].startswith(
        "The product that was requested doesn't exist")
    other_store = httpx.get(f"{shop.root}/rest/nostore/V1/orders", params=sc(size=1),
                            headers={"authorization": f"Bearer {shop.token}"})
    assert other_store.status_code == 400
    default_store = httpx.get(f"{shop.root}/rest/V1/orders", params=sc(size=1),
                              headers={"authorization": f"Bearer {shop.token}"})
    assert default_store.status_code == 200


# time ---------------------------------------------------------------------------------------

def test_timestamps_are_utc_without_an_offset_whatever_the_store_timezone(api, shop) -> None:
    config = api.get("/store/storeConfigs").json()[0]
    assert config["timezone"] == "Europe/Berlin"
    for path in ("/orders", "/customers/search", "/products", "/carts/search", "/categories/list"):
        for record in api.get(path, params=sc(size=5)).json()["items"]:
            assert MAGENTO_TIME.match(record["created_at"]), (path, record["created_at"])
            assert MAGENTO_TIME.match(record["updated_at"]), (path, record["updated_at"])
    fake = shop.fake()
    fake.post("/clock", json={"now": "2025-07-01 10:00:00"})  # noon in Berlin
    try:
        touched = fake.post("/orders/3/touch").json()
        assert touched["updated_at"] == "2025-07-01 10:00:00"
        found = api.get("/orders", params=sc([("updated_at", "2025-07-01 10:00:00", "eq")])).json()
        assert [o["entity_id"] for o in found["items"]] == [3]
    finally:
        fake.post("/clock", json={"now": None})


def test_mass_actions_put_more_records_on_one_second_than_a_page_holds(api) -> None:
    for path in ("/orders", "/products", "/customers/search"):
        seconds: dict[str, int] = {}
        for record in every(api, path):
            seconds[record["updated_at"]] = seconds.get(record["updated_at"], 0) + 1
        assert max(seconds.values()) >= 6, path


# the data's traps ---------------------------------------------------------------------------

def test_orders_hold_configurable_pairs_guests_negative_discounts_and_their_quotes(api) -> None:
    orders = every(api)
    children = [i for o in orders for i in o["items"] if i.get("parent_item_id")]
    assert children and all(c["parent_item"]["product_type"] == "configurable" for c in children)
    assert all(c["row_total"] == 0 for c in children)
    with_coupon = [o for o in orders if o.get("coupon_code")]
    assert with_coupon and all(o["discount_amount"] < 0 for o in with_coupon)
    assert all(i["discount_amount"] >= 0 for o in with_coupon for i in o["items"])
    assert any("customer_id" not in o and o["customer_is_guest"] == 1 for o in orders)
    carts = {c["id"]: c for c in every(api, "/carts/search")}
    ordered = [c for c in carts.values() if not c["is_active"]]
    assert ordered and all(c.get("reserved_order_id") for c in ordered)
    recent = [o for o in orders if o["quote_id"] in carts]
    assert recent and all(carts[o["quote_id"]]["reserved_order_id"] == o["increment_id"]
                          for o in recent)
    assert any(c["customer"] == {"email": None, "firstname": None, "lastname": None}
               for c in carts.values())


def test_configurable_children_are_served_by_url_encoded_sku(api) -> None:
    parent = api.get("/products", params=sc([("sku", "TEE Été", "eq")])).json()["items"][0]
    assert parent["type_id"] == "configurable"
    children = api.get("/configurable-products/TEE%20%C3%89t%C3%A9/children").json()
    assert [c["id"] for c in children] == parent["extension_attributes"]["configurable_product_links"]
    assert all(c["visibility"] == 1 and c["type_id"] == "simple" for c in children)
    assert api.get("/configurable-products/MG00031/children").status_code in (200, 404)
    values = {a["attribute_code"]: a["value"] for a in parent["custom_attributes"]}
    assert isinstance(values["tax_class_id"], str) and values["url_key"]


# the hosting layer --------------------------------------------------------------------------

def test_the_rate_limit_answers_429_with_retry_after_and_faults_answer_html() -> None:
    limited, faulty = start_many(("--rate-limit", "3", "--orders", "5"),
                                 ("--fault-rate", "1", "--orders", "5", "--retry-after", "2"))
    try:
        api = limited.client()
        statuses = [api.get("/orders", params=sc(size=1)).status_code for _ in range(3)]
        assert statuses == [200, 200, 200]  # the burst: as many as the rate
        limited.fake().post("/rate-limit", json={"tokens": 0})  # spent, as other clients would
        answer = api.get("/orders", params=sc(size=1))
        assert answer.status_code == 429 and answer.headers["retry-after"] == "1"  # 1/3 s, up
        assert answer.json() == {"message": "Too many requests. Try again later."}
        assert limited.fake().get("/stats").json() == {"requests": 4, "throttled": 1}

        seen = {faulty.client().get("/orders", params=sc(size=1)).status_code for _ in range(30)}
        assert seen <= {429, 502, 503, 504, 403} and len(seen) >= 3
        html = [faulty.client().get("/orders", params=sc(size=1)) for _ in range(10)]
        assert any(r.headers["content-type"].startswith("text/html") for r in html)
        assert faulty.fake().get("/orders/ids").status_code == 200  # never faulted
    finally:
        limited.stop()
        faulty.stop()


# /__fake__ ----------------------------------------------------------------------------------

def test_the_fake_api_patches_creates_and_deletes(shop, api) -> None:
    fake = shop.fake()
    patched = fake.put("/orders/5", json={"status": "closed", "state": "closed",
                                          "grand_total": 12.5}).json()
    assert (patched["status"], patched["grand_total"]) == ("closed", 12.5)
    assert api.get("/orders/5").json()["status"] == "closed"
    created = fake.post("/orders", json={"customer_id": 3}).json()
    assert created["customer_id"] == 3 and created["state"] == "new"
    quote = api.get(f"/carts/{created['quote_id']}").json()
    assert quote["reserved_order_id"] == created["increment_id"] and quote["is_active"] is False
    fake.delete(f"/orders/{created['entity_id']}")
    assert created["entity_id"] not in fake.get("/orders/ids").json()["ids"]
    assert api.get(f"/orders/{created['entity_id']}").status_code == 404
    fake.put("/orders/5", json={"status": "complete", "state": "complete"})
