"""The fake WooCommerce shop over real localhost HTTP: the wire format a connector relies on
(pagination headers, errors, auth, date filters and their timezone trap, ordering, status
filters), the generated data's special records and determinism, the rate limit and faults,
and the /__fake__ modification API."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest

from sandbox.shops.woocommerce.launch import RunningFakeShop
from sandbox.shops.woocommerce.launch import start_in_thread as start
from sandbox.shops.woocommerce.launch import start_many_in_thread as start_many

ISO = "%Y-%m-%dT%H:%M:%S"


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    """The default shop (seed 0, 50 customers, 200 orders, 30 products); never changed."""
    running = start()
    yield running
    running.stop()


@pytest.fixture
def api(shop: RunningFakeShop) -> httpx.Client:
    return shop.client()


def every(api: httpx.Client, path: str, **params: object) -> list[dict]:
    records, page = [], 1
    while True:
        answer = api.get(path, params={**params, "per_page": 100, "page": page})
        assert answer.status_code == 200, answer.text
        records += answer.json()
        if page >= int(answer.headers["x-wp-totalpages"]):
            return records
        page += 1


def shifted(text: str, **delta: float) -> str:
    return (datetime.strptime(text, ISO) + timedelta(**delta)).strftime(ISO)


# pagination ------------------------------------------------------------------------------

def test_pages_carry_totals_and_prev_next_links(api: httpx.Client) -> None:
    answer = api.get("/orders", params={"per_page": 7, "page": 2, "orderby": "id"})
    total = int(answer.headers["x-wp-total"])
    assert total == 198  # 200 orders, but status=any lists neither the trashed one nor the draft
    assert answer.headers["x-wp-totalpages"] == str(math.ceil(total / 7))
    assert len(answer.json()) == 7
    links = answer.headers.get_list("link")
    assert len(links) == 2
    assert links[0].endswith('?per_page=7&orderby=id&page=1>; rel="prev"')
    assert links[1].endswith('?per_page=7&orderby=id&page=3>; rel="next"')
    last = api.get("/orders", params={"per_page": 7, "page": math.ceil(total / 7)})
    assert [link.endswith('rel="prev"') for link in last.headers.get_list("link")] == [True]


def test_default_page_size_is_10_and_offset_overrides_page(api: httpx.Client) -> None:
    by_id = api.get("/orders", params={"orderby": "id", "order": "asc"}).json()
    assert len(by_id) == 10
    shifted_page = api.get("/orders", params={"orderby": "id", "order": "asc", "offset": 5,
                                              "per_page": 3, "page": 9}).json()
    assert [o["id"] for o in shifted_page] == [o["id"] for o in by_id[5:8]]


def test_per_page_above_100_is_a_400_in_the_wordpress_shape(api: httpx.Client) -> None:
    answer = api.get("/orders", params={"per_page": 101})
    assert answer.status_code == 400
    message = "per_page must be between 1 (inclusive) and 100 (inclusive)"
    assert answer.json() == {
        "code": "rest_invalid_param", "message": "Invalid parameter(s): per_page",
        "data": {"status": 400, "params": {"per_page": message},
                 "details": {"per_page": {"code": "rest_out_of_bounds", "message": message,
                                          "data": None}}}}
    bad = api.get("/orders", params={"orderby": "total", "modified_after": "yesterday"}).json()
    assert bad["message"] == "Invalid parameter(s): orderby, modified_after"
    assert bad["data"]["params"]["modified_after"] == "Invalid date."


def test_a_page_past_the_end_is_an_empty_list_with_the_real_totals(api: httpx.Client) -> None:
    answer = api.get("/orders", params={"page": 99, "per_page": 100})
    assert answer.status_code == 200
    assert answer.json() == []
    assert (answer.headers["x-wp-total"], answer.headers["x-wp-totalpages"]) == ("198", "2")


# auth and errors -------------------------------------------------------------------------

def test_basic_auth_and_query_parameters_both_work(shop: RunningFakeShop) -> None:
    basic = shop.client().get("/customers")
    query = shop.client(auth=False).get(
        "/customers", params={"consumer_key": shop.key, "consumer_secret": shop.secret})
    assert basic.status_code == query.status_code == 200
    assert basic.json() == query.json()


@pytest.mark.parametrize(("auth", "params", "status", "code", "message"), [
    (("ck_wrong", "cs_shopsync_fake"), {}, 401, "woocommerce_rest_authentication_error",
     "Consumer key is invalid."),
    (("ck_shopsync_fake", "cs_wrong"), {}, 401, "woocommerce_rest_authentication_error",
     "Consumer secret is invalid."),
    (False, {"consumer_key": "ck_shopsync_fake", "consumer_secret": "nope"}, 401,
     "woocommerce_rest_authentication_error", "Consumer secret is invalid."),
    (False, {}, 401, "woocommerce_rest_cannot_view", "Sorry, you cannot list resources."),
], ids=["bad-key", "bad-secret", "bad-secret-in-query", "no-credentials"])
def test_refused_credentials_get_the_exact_woocommerce_bodies(
    shop: RunningFakeShop, auth: object, params: dict, status: int, code: str, message: str
) -> None:
    answer = shop.client(auth=auth).get("/orders", params=params)
    assert answer.status_code == status
    assert answer.json() == {"code": code, "message": message, "data": {"status": status}}


def test_unknown_routes_and_ids_answer_wordpress_errors(api: httpx.Client) -> None:
    assert api.get("/carts").json()["code"] == "rest_no_route"
    missing = api.get("/orders/999999")
    assert missing.status_code == 404
    assert missing.json() == {"code": "woocommerce_rest_shop_order_invalid_id",
                              "message": "Invalid ID.", "data": {"status": 404}}


# date filters ----------------------------------------------------------------------------

def test_modified_after_and_before_are_exclusive(api: httpx.Client) -> None:
    order = api.get("/orders/1010").json()
    at = order["date_modified_gmt"]
    window = {"dates_are_gmt": "true", "per_page": 100}

    def ids(**bounds: str) -> set[int]:
        return {o["id"] for o in every(api, "/orders", **window, **bounds)}

    assert 1010 not in ids(modified_after=at)
    assert 1010 in ids(modified_after=shifted(at, seconds=-1))
    assert 1010 not in ids(modified_before=at)
    assert 1010 in ids(modified_before=shifted(at, seconds=1))
    created = order["date_created_gmt"]
    assert 1010 in ids(after=shifted(created, seconds=-1), before=shifted(created, seconds=1))


def test_naive_filter_dates_are_site_local_unless_dates_are_gmt(api: httpx.Client) -> None:
    order = api.get("/orders/1010").json()
    local, gmt = order["date_modified"], order["date_modified_gmt"]
    assert local != gmt  # Europe/Paris is one or two hours ahead
    bound = shifted(gmt, minutes=10)
    as_local = {o["id"] for o in every(api, "/orders", modified_after=bound)}
    as_gmt = {o["id"] for o in every(api, "/orders", modified_after=bound, dates_are_gmt="true")}
    assert 1010 in as_local
    assert 1010 not in as_gmt
    # a zoned value is turned into site time first (WP_Date_Query), even against the GMT
    # column: "Z" shifts the bound by the site's offset, so only naive values are safe
    just_before = shifted(gmt, seconds=-1)
    naive = {o["id"] for o in every(api, "/orders", modified_after=just_before, dates_are_gmt="true")}
    zoned = {o["id"] for o in every(api, "/orders", modified_after=just_before + "Z",
                                    dates_are_gmt="true")}
    assert 1010 in naive
    assert 1010 not in zoned


def test_customers_have_no_date_filters_and_list_by_name(api: httpx.Client) -> None:
    plain = api.get("/customers", params={"per_page": 100})
    filtered = api.get("/customers", params={"per_page": 100, "modified_after": "2099-01-01T00:00:00"})
    assert plain.headers["x-wp-total"] == filtered.headers["x-wp-total"] == "50"
    names = [f"{c['first_name']} {c['last_name']}".casefold() for c in plain.json()]
    assert names == sorted(names)
    everyone = api.get("/customers", params={"role": "all", "orderby": "id", "order": "asc"})
    assert everyone.json()[0]["role"] == "administrator"
    assert everyone.headers["x-wp-total"] == "51"


# ordering and statuses -------------------------------------------------------------------

def test_orderby_modified_breaks_ties_by_id(api: httpx.Client) -> None:
    asc = every(api, "/orders", orderby="modified", order="asc")
    keys = [(o["date_modified_gmt"], o["id"]) for o in asc]
    assert keys == sorted(keys)
    biggest_tie = Counter(o["date_modified_gmt"] for o in asc).most_common(1)[0][1]
    assert biggest_tie >= 15  # a bulk edit: ties that span page boundaries
    desc = every(api, "/orders", orderby="modified")
    assert [o["id"] for o in desc] == [o["id"] for o in reversed(asc)]


def test_include_exclude_and_the_other_orderings(api: httpx.Client) -> None:
    picked = api.get("/orders", params={"include": "1050,1003,1020", "orderby": "include"}).json()
    assert [o["id"] for o in picked] == [1050, 1003, 1020]
    rest = every(api, "/orders", exclude="1003,1020", orderby="id", order="asc")
    assert {1003, 1020}.isdisjoint(o["id"] for o in rest) and len(rest) == 196
    by_date = every(api, "/orders", orderby="date", order="asc")
    assert [o["date_created_gmt"] for o in by_date] == sorted(o["date_created_gmt"] for o in by_date)
    titles = [p["name"].casefold() for p in every(api, "/products", orderby="title", order="asc")]
    assert titles == sorted(titles)
    registered = every(api, "/customers", orderby="registered_date", order="desc")
    dates = [c["date_created_gmt"] for c in registered]
    assert dates == sorted(dates, reverse=True)


def test_status_any_hides_trash_and_drafts_which_can_be_asked_for(api: httpx.Client) -> None:
    listed = every(api, "/orders")
    assert {"trash", "checkout-draft"}.isdisjoint(o["status"] for o in listed)
    assert [o["id"] for o in every(api, "/orders", status="trash")] == [1005]
    assert [o["id"] for o in every(api, "/orders", status="checkout-draft")] == [1006]
    both = every(api, "/orders", **{"status[]": ["completed", "refunded"]})
    assert {o["status"] for o in both} == {"completed", "refunded"}
    bogus = api.get("/orders", params={"status": "completed,shipped"}).json()
    assert bogus["data"]["params"]["status"].startswith("status[1] is not one of any, trash,")
    products = every(api, "/products")
    assert "trash" not in {p["status"] for p in products}
    assert len(every(api, "/products", status="trash")) == 2


# the generated data ----------------------------------------------------------------------

def test_the_data_holds_the_records_real_shops_have(api: httpx.Client) -> None:
    orders = every(api, "/orders")
    guest = api.get("/orders/1002").json()
    assert guest["customer_id"] == 0 and guest["billing"]["first_name"] == ""
    assert "@" in guest["billing"]["email"]
    assert sum(o["customer_id"] == 0 for o in orders) >= 10
    line = orders[0]["line_items"][0]
    assert isinstance(line["price"], float) and isinstance(line["total"], str)
    negative = api.get("/orders/1003").json()["line_items"][0]
    assert (negative["total"], negative["price"]) == ("-5.00", -5.0)
    assert any(p["regular_price"] == "-5.00" for p in every(api, "/products"))

    customers = every(api, "/customers")
    assert "not-an-email" in {c["email"] for c in customers}
    names = {c["first_name"] + " " + c["last_name"] for c in customers}
    assert "Rene\u0301e Zoe\u0308lle-Ha\u0308user" in names  # combining accents, not NFC
    assert any("\u0645" in n for n in names) and any("🌸" in n for n in names)
    assert all("\x00" not in n for n in names)

    variable = [p for p in every(api, "/products") if p["type"] == "variable"]
    big = max(variable, key=lambda p: len(p["variations"]))
    assert len(big["variations"]) == 12
    page = api.get(f"/products/{big['id']}/variations")
    assert (len(page.json()), page.headers["x-wp-total"]) == (10, "12")
    assert page.json()[0]["attributes"][0]["name"] == "Color"

    coupons = every(api, "/coupons")
    assert {c["discount_type"] for c in coupons} == {"percent", "fixed_cart", "fixed_product"}
    categories = every(api, "/products/categories")
    assert any(c["parent"] for c in categories)
    assert "Uncategorized" in {c["name"] for c in categories}


def test_order_statuses_and_system_status(api: httpx.Client) -> None:
    totals = api.get("/reports/orders/totals").json()
    assert [t["slug"] for t in totals][:4] == ["pending", "processing", "on-hold", "completed"]
    assert sum(t["total"] for t in totals) == 199  # the trashed order is not counted
    status = api.get("/system_status").json()
    assert status["environment"]["version"]
    assert (status["settings"]["currency"], status["settings"]["timezone"]) == ("EUR", "Europe/Paris")


def test_the_same_seed_gives_the_same_shop_and_another_seed_another(shop: RunningFakeShop) -> None:
    same, other = start_many((), ("--seed", "1", "--timezone", "UTC"))
    try:
        def snapshot(running: RunningFakeShop) -> list:
            api = running.client()
            return [every(api, path, orderby="id") for path in ("/orders", "/products", "/customers")]

        def strip(snap: list) -> list:  # the links name each server's own port
            return [[{k: v for k, v in r.items() if k != "_links"} for r in rs] for rs in snap]

        first = strip(snapshot(shop))
        assert strip(snapshot(same)) == first
        different = strip(snapshot(other))
        assert different != first
        order = different[0][0]
        assert order["date_created"] == order["date_created_gmt"]  # a UTC site
    finally:
        same.stop()
        other.stop()


# rate limit and faults -------------------------------------------------------------------

def test_the_rate_limit_answers_429_with_retry_after(shop: RunningFakeShop) -> None:
    """When the bucket refuses and refills is arithmetic (tests/sandbox/shops/test_hosting.py);
    here the burst, and a refusal made certain by draining the limit."""
    running = start("--rate-limit", "5")
    try:
        api = running.client()
        assert [api.get("/coupons").status_code for _ in range(5)] == [200] * 5  # burst = rate
        running.fake().post("/rate-limit", json={"tokens": 0})  # spent, as other clients would
        limited = api.get("/coupons")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "1"  # 1/5 s, up
        assert limited.json()["code"] == "rate_limit_exceeded"
        assert running.fake().get("/clock").status_code == 200  # the fake API is not limited
        stats = running.fake().get("/stats").json()
        assert stats == {"requests": 6, "throttled": 1}  # the fake API not counted
        no_auth = running.client(auth=False).get(running.root + "/__fake__/stats")
        assert no_auth.status_code == 401
    finally:
        running.stop()
    unlimited = shop.fake().post("/rate-limit", json={"tokens": 0})
    assert unlimited.status_code == 400 and "--rate-limit" in unlimited.json()["message"]


def test_faults_are_reproducible_and_look_like_hosts_and_cdns() -> None:
    shops = start_many(("--fault-rate", "0.5", "--seed", "3"), ("--fault-rate", "0.5", "--seed", "3"))
    try:
        clients = [s.client() for s in shops]
        runs = [[client.get("/coupons") for _ in range(40)] for client in clients]
        statuses = [[a.status_code for a in run] for run in runs]
        assert statuses[0] == statuses[1]
        assert set(statuses[0]) == {200, 403, 429, 502, 503}
        by_status = {a.status_code: a for a in runs[0]}
        assert "cloudflare" in by_status[502].text.lower()
        assert by_status[502].headers["content-type"].startswith("text/html")
        assert "Attention Required" in by_status[403].text
        assert by_status[429].headers["retry-after"] == "1"
    finally:
        for s in shops:
            s.stop()


# the /__fake__ API -----------------------------------------------------------------------

def test_the_fake_api_changes_records_and_the_clock() -> None:
    running = start("--orders", "30", "--customers", "5", "--products", "14")
    try:
        api, fake = running.client(), running.fake()
        assert running.client(auth=False).get(running.root + "/__fake__/clock").status_code == 401
        assert fake.post("/clock", json={"now": "2026-01-02T03:04:05"}).json()["frozen"]

        touched = fake.post("/orders/1010/touch").json()
        assert touched["date_modified_gmt"] == "2026-01-02T03:04:05"
        assert touched["date_modified"] == "2026-01-02T04:04:05"  # Paris, winter
        newest = api.get("/orders", params={"orderby": "modified", "per_page": 1}).json()[0]
        assert newest["id"] == 1010

        fake.post("/clock", json={"advance": 60})
        patched = fake.put("/orders/1011", json={"status": "cancelled",
                                                 "billing": {"email": "new@example.com"}}).json()
        assert (patched["status"], patched["billing"]["email"]) == ("cancelled", "new@example.com")
        assert patched["billing"]["city"]  # the other billing fields are kept
        assert patched["date_modified_gmt"] == "2026-01-02T03:05:05"

        created = fake.post("/orders", json={"customer_id": 2})
        assert created.status_code == 201
        assert api.get(f"/orders/{created.json()['id']}").json()["customer_id"] == 2

        product = api.get("/products", params={"type": "variable", "per_page": 1}).json()[0]
        path = f"/products/{product['id']}"
        assert fake.delete(path).json()["status"] == "trash"
        assert fake.delete(path).json()["code"] == "woocommerce_rest_already_trashed"
        assert fake.delete(path, params={"force": "true"}).status_code == 200
        assert api.get(path).status_code == 404
        assert api.get(f"{path}/variations/{product['variations'][0]}").status_code == 404
        refused = fake.delete("/customers/2")  # customers cannot be trashed: force or nothing
        assert (refused.status_code, refused.json()["code"]) == (
            501, "woocommerce_rest_trash_not_supported")
        assert api.get("/customers/2").status_code == 200

        fake.post("/clock", json={"advance": 60})
        bulk = fake.post("/orders/touch", json={"ids": [1001, 1002, 1003]}).json()
        window = api.get("/orders", params={"modified_after": shifted(bulk["date_modified_gmt"], seconds=-1),
                                            "dates_are_gmt": "true"}).json()
        assert {o["id"] for o in window} == {1001, 1002, 1003}
        ids = fake.get("/orders/ids").json()
        assert len(ids["ids"]) == 31 and ids["statuses"]["trash"] >= 1
    finally:
        running.stop()
