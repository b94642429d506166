"""The fake PrestaShop shop over real localhost HTTP: the wire format a connector relies on
(output format selection, display, the filters and the date=1 gate, sort, limit, error codes,
auth), each version's typing and empty list, multilingual fields, shop-local dates, the
generated data's special records, faults and the /__fake__ API."""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import httpx
import pytest

from sandbox.shops.prestashop.launch import RunningFakeShop
from sandbox.shops.prestashop.launch import start_in_thread as start
from sandbox.shops.prestashop.launch import start_many_in_thread as start_many
from sandbox.shops.prestashop.settings import LIMITED_KEY


@pytest.fixture(scope="module")
def shops() -> Iterator[dict[str, RunningFakeShop]]:
    """1.7 with two languages (default), 8 with one language in New York; never changed."""
    default, eight = start_many((), ("--version", "8", "--languages", "1", "--timezone",
                                     "America/New_York"))
    yield {"1.7": default, "8": eight}
    default.stop()
    eight.stop()


@pytest.fixture
def api(shops: dict[str, RunningFakeShop]) -> httpx.Client:
    return shops["1.7"].client()


def errors(answer: httpx.Response) -> list[tuple[int, str]]:
    return [(e["code"], e["message"]) for e in answer.json()["errors"]]


# output format, display --------------------------------------------------------------------

def test_xml_unless_json_is_asked_for_in_prestashops_order(shops: dict[str, RunningFakeShop]) -> None:
    xml = shops["1.7"].client(json=False)
    assert xml.get("/orders", params={"limit": 2}).text.startswith('<?xml version="1.0"')
    assert xml.get("/orders", params={"limit": 2, "output_format": "JSON"}).json() == {
        "orders": [{"id": 1}, {"id": 2}]}
    assert xml.get("/orders", params={"limit": 1, "io_format": "JSON"}).json()["orders"]
    # the headers come first: Io-Format over Output-Format over the parameters
    answer = xml.get("/orders", params={"limit": 1, "output_format": "JSON"},
                     headers={"Output-Format": "XML"})
    assert answer.headers["content-type"].startswith("text/xml")
    answer = xml.get("/orders", params={"limit": 1}, headers={"Io-Format": "JSON",
                                                              "Output-Format": "XML"})
    assert answer.headers["content-type"] == "application/json"
    assert xml.get("/orders", params={"limit": 1, "output_format": "json"}).text.startswith("<?xml")


def test_display_decides_between_ids_fields_and_full_records(api: httpx.Client) -> None:
    assert api.get("/orders", params={"limit": 3}).json() == {"orders": [{"id": 1}, {"id": 2}, {"id": 3}]}
    some = api.get("/orders", params={"limit": 1, "display": "[id,reference,id_cart]"}).json()
    assert list(some["orders"][0]) == ["id", "reference", "id_cart"]
    full = api.get("/orders", params={"limit": 1, "display": "full"}).json()["orders"][0]
    assert "associations" in full and full["associations"]["order_rows"]
    one = api.get("/orders/1").json()
    assert list(one) == ["order"] and one["order"] == full
    assert api.get("/orders/1", params={"display": "[id]"}).json() == {"orders": [{"id": 1}]}
    missing = api.get("/orders/999999")
    assert (missing.status_code, missing.content) == (404, b"")
    assert errors(api.get("/orders", params={"display": "[id,nope]"}))[0][0] == 35
    assert errors(api.get("/orders", params={"display": "id"}))[0][0] == 36


def test_answers_carry_the_webservice_headers(api: httpx.Client) -> None:
    answer = api.get("/orders", params={"limit": 1})
    assert answer.headers["psws-version"] == "1.7.8.11"
    assert answer.headers["x-powered-by"] == "PrestaShop Webservice"
    assert {"execution-time", "access-time", "content-sha1"} <= answer.headers.keys()


# typing per version ----------------------------------------------------------------------

def test_1_7_renders_every_value_as_a_string_and_8_keeps_integers(
    shops: dict[str, RunningFakeShop]
) -> None:
    old = shops["1.7"].client().get("/orders/1").json()["order"]
    new = shops["8"].client().get("/orders/1").json()["order"]
    assert old["id"] == new["id"] == 1  # the top-level id is a number in both
    assert old["id_customer"] == str(new["id_customer"]) and isinstance(new["id_customer"], int)
    assert isinstance(new["current_state"], int) and isinstance(old["current_state"], str)
    for order in (old, new):  # money keeps six decimals, booleans "0"/"1", in both
        assert order["total_paid"].endswith("0000") and order["total_paid"].count(".") == 1
        assert order["valid"] in ("0", "1")
    assert isinstance(old["associations"]["order_rows"][0]["product_id"], str)
    assert isinstance(new["associations"]["order_rows"][0]["product_id"], int)
    product_old = shops["1.7"].client().get("/products/1").json()["product"]
    product_new = shops["8"].client().get("/products/1").json()["product"]
    assert product_old["low_stock_threshold"] == ""  # null: empty string in 1.7 ...
    assert "low_stock_threshold" not in product_new  # ... left out in 8
    assert "product_type" in product_new and "product_type" not in product_old


def test_an_empty_list_is_a_bare_array_in_1_7_only(shops: dict[str, RunningFakeShop]) -> None:
    params = {"display": "full", "filter[id]": "[999999]"}
    assert shops["1.7"].client().get("/orders", params=params).json() == []
    assert shops["8"].client().get("/orders", params=params).json() == {"orders": []}


def test_multilingual_fields_are_lists_or_a_plain_string(shops: dict[str, RunningFakeShop]) -> None:
    two = shops["1.7"].client().get("/order_states/2").json()["order_state"]["name"]
    assert two == [{"id": "1", "value": "Payment accepted"}, {"id": "2", "value": "Paiement accepté"}]
    one = shops["8"].client().get("/order_states/2").json()["order_state"]["name"]
    assert one == "Payment accepted"
    asked = shops["1.7"].client().get("/order_states/2", params={"language": "2"}).json()
    assert asked["order_state"]["name"] == "Paiement accepté"
    both = shops["1.7"].client().get("/order_states/2", params={"language": "[1|2]"}).json()
    assert len(both["order_state"]["name"]) == 2
    assert errors(shops["1.7"].client().get("/orders", params={"language": "abc"}))[0][0] == 79
    assert errors(shops["1.7"].client().get("/orders", params={"language": "9"}))[0][0] == 81


# filters, sort, limit --------------------------------------------------------------------

def test_date_filters_and_sorts_need_date_1(api: httpx.Client) -> None:
    window = {"filter[date_upd]": "[2024-03-01 00:00:00,2024-03-31 23:59:59]"}
    code, message = errors(api.get("/orders", params=window))[0]
    assert code == 32 and message.startswith("This filter does not exist. Did you mean:")
    assert errors(api.get("/orders", params={"sort": "[date_upd_ASC]"}))[0][0] == 38
    listed = api.get("/orders", params={**window, "date": "1", "display": "[id,date_upd]",
                                        "sort": "[date_upd_ASC,id_ASC]"}).json()["orders"]
    assert listed and all("2024-03-01" <= o["date_upd"] <= "2024-03-31 23:59:59" for o in listed)
    keys = [(o["date_upd"], o["id"]) for o in listed]
    assert keys == sorted(keys)


def test_between_is_inclusive_and_the_comparison_operators_are_strict(api: httpx.Client) -> None:
    every = api.get("/orders", params={"display": "[id,date_upd]", "date": "1",
                                       "sort": "[date_upd_ASC,id_ASC]"}).json()["orders"]
    second = every[40]["date_upd"]

    def ids(value: str) -> set[int]:
        found = api.get("/orders", params={"filter[date_upd]": value, "date": "1"}).json()
        return {o["id"] for o in found["orders"]} if found else set()

    at = {o["id"] for o in every if o["date_upd"] == second}
    assert ids(f"[{second},{second}]") == at
    assert ids(f">[{second}]") == {o["id"] for o in every if o["date_upd"] > second}
    assert ids(f"<[{second}]") == {o["id"] for o in every if o["date_upd"] < second}
    assert ids(f"[{every[50]['date_upd']},{every[10]['date_upd']}]") == {  # bounds are sorted
        o["id"] for o in every if every[10]["date_upd"] <= o["date_upd"] <= every[50]["date_upd"]}


def test_the_other_filter_operators(api: httpx.Client) -> None:
    def ids(resource: str, field: str, value: str) -> list[int]:
        found = api.get(f"/{resource}", params={f"filter[{field}]": value}).json()
        return [r["id"] for r in found[resource]] if found else []

    assert ids("orders", "id", "[3|1|7]") == [1, 3, 7]
    assert ids("orders", "id", "[2,4]") == [2, 3, 4]
    assert ids("orders", "id", ">[197]") == [198, 199, 200]
    assert 5 not in ids("order_states", "id", "![5|6]") and 4 in ids("order_states", "id", "![5|6]")
    assert ids("carriers", "name", "[DHL Express]") == [4, 5]
    assert ids("carriers", "name", "[dhl]%") == [4, 5]  # LIKE, case-insensitive
    assert ids("carriers", "name", "%[collect]") == [1]
    assert ids("carriers", "name", "%[ARRI]%") == [2]
    assert ids("order_states", "name", "%[livré]") == [5]  # any language read
    assert len(ids("orders", "id", ">=[5]")) == 200  # an operator PrestaShop ignores
    assert errors(api.get("/orders", params={"filter[shipping_number]": "[1]"}))[0][0] == 34
    assert errors(api.get("/orders", params={"filter[id]": ""}))[0][0] == 33
    assert errors(api.get("/orders", params={"filter[customer][id]": "[1]"}))[0][0] == 31


def test_sort_and_limit(api: httpx.Client) -> None:
    first = api.get("/orders", params={"sort": "[id_DESC]", "limit": "3"}).json()["orders"]
    assert [o["id"] for o in first] == [200, 199, 198]
    paged = api.get("/orders", params={"sort": "id_ASC", "limit": "10,2"}).json()["orders"]
    assert [o["id"] for o in paged] == [11, 12]
    assert errors(api.get("/orders", params={"sort": "[id]"}))[0][0] == 37
    assert errors(api.get("/orders", params={"sort": "[nope_ASC]"}))[0][0] == 38
    assert errors(api.get("/orders", params={"limit": "1,2,3"}))[0][0] == 39


def test_unknown_resources_get_a_did_you_mean(api: httpx.Client) -> None:
    answer = api.get("/ordres")
    assert answer.status_code == 400
    code, message = errors(answer)[0]
    assert code == 27 and message.startswith('Resource of type "ordres" does not exists. Did you'
                                             ' mean: "orders"?')


# auth --------------------------------------------------------------------------------------

def test_the_key_is_the_basic_user_name_or_ws_key(shops: dict[str, RunningFakeShop]) -> None:
    shop = shops["1.7"]
    bare = httpx.get(f"{shop.api_url}/orders", params={"output_format": "JSON", "limit": 1})
    assert (bare.status_code, bare.text) == (401, "401 Unauthorized")
    assert bare.headers["www-authenticate"].startswith('Basic realm="Welcome to PrestaShop')
    by_param = httpx.get(f"{shop.api_url}/orders", params={"ws_key": shop.key, "limit": 1,
                                                          "output_format": "JSON"})
    assert by_param.json() == {"orders": [{"id": 1}]}
    token = base64.b64encode(f"{shop.key}:anything".encode()).decode()
    with_password = httpx.get(f"{shop.api_url}/orders", params={"limit": 1, "output_format": "JSON"},
                              headers={"Authorization": f"Basic {token}"})
    assert with_password.status_code == 200  # the password is ignored


@pytest.mark.parametrize(("key", "code", "status"), [
    ("short", 18, 401), ("WRONGKEYWRONGKEYWRONGKEYWRONGKEY", 20, 401),
])
def test_refused_keys(shops: dict[str, RunningFakeShop], key: str, code: int, status: int) -> None:
    answer = shops["1.7"].client(key=key).get("/orders")
    assert answer.status_code == status
    assert errors(answer)[0][0] == code
    assert "WWW-Authenticate".lower() in answer.headers


def test_permissions_methods_and_shops(shops: dict[str, RunningFakeShop]) -> None:
    limited = shops["1.7"].client(key=LIMITED_KEY)
    assert limited.get("/orders", params={"limit": 1}).status_code == 200
    refused = limited.get("/customers")
    assert refused.status_code == 401 and errors(refused)[0][0] == 26
    post = shops["1.7"].client().post("/orders")
    assert post.status_code == 405 and errors(post)[0][0] == 25
    other_shop = shops["1.7"].client().get("/orders", params={"id_shop": 2})
    assert other_shop.status_code == 403 and errors(other_shop)[0][0] == 132


# dates, data -------------------------------------------------------------------------------

def test_dates_are_shop_local_without_an_offset(shops: dict[str, RunningFakeShop]) -> None:
    for shop in (shops["1.7"], shops["8"]):
        order = shop.client().get("/orders/10").json()["order"]
        assert len(order["date_upd"]) == 19 and "T" not in order["date_upd"]
    paris = shops["1.7"].client().get("/orders/10").json()["order"]["date_upd"]
    new_york = shops["8"].client().get("/orders/10").json()["order"]["date_upd"]
    as_utc = {datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZoneInfo(zone))
              .astimezone(UTC) for text, zone in ((paris, "Europe/Paris"),
                                                  (new_york, "America/New_York"))}
    assert len(as_utc) == 1 and paris != new_york  # same instant, two wall clocks


def test_the_data_has_the_records_connectors_trip_on(api: httpx.Client) -> None:
    orders = api.get("/orders", params={"display": "full"}).json()["orders"]
    assert Counter(o["date_upd"] for o in orders).most_common(1)[0][1] > 20  # a bulk edit
    assert any(o["invoice_date"] == "0000-00-00 00:00:00" for o in orders)
    assert {o["id_currency"] for o in orders} == {"1", "2"}
    customers = api.get("/customers", params={"display": "full"}).json()["customers"]
    assert "not-an-email" in {c["email"] for c in customers}
    assert {c["is_guest"] for c in customers} == {"0", "1"} and any(c["deleted"] == "1" for c in customers)
    assert any(c["birthday"] == "0000-00-00" for c in customers)
    assert all(c["passwd"].startswith("$2y$") for c in customers)  # as the real one shows it
    carriers = api.get("/carriers", params={"display": "full"}).json()["carriers"]
    assert [(c["id_reference"], c["deleted"]) for c in carriers if c["name"] == "DHL Express"] == [
        ("4", "1"), ("4", "0")]
    ordered = {o["id_cart"] for o in orders}
    carts = api.get("/carts", params={"display": "[id]"}).json()["carts"]
    assert len(carts) - len(ordered) == 66  # a third of the orders' count, abandoned


def test_the_same_seed_gives_the_same_shop(shops: dict[str, RunningFakeShop]) -> None:
    again = start()
    try:
        for path in ("/orders/17", "/customers/5", "/products/1", "/carts/20"):
            assert again.client().get(path).json() == shops["1.7"].client().get(path).json()
    finally:
        again.stop()


# faults and /__fake__ --------------------------------------------------------------------

def test_rate_limit_and_faults() -> None:
    limited, faulty = start_many(("--rate-limit", "2", "--orders", "5"),
                                 ("--fault-rate", "1", "--seed", "3", "--orders", "5"))
    try:
        client = limited.client()
        assert [client.get("/orders").status_code for _ in range(2)] == [200, 200]  # the burst
        limited.fake().post("/rate-limit", json={"tokens": 0})  # spent, as other clients would
        throttled = client.get("/orders")
        assert throttled.status_code == 429 and throttled.headers["retry-after"] == "1"
        assert limited.fake().get("/stats").json() == {"requests": 3, "throttled": 1}
        seen: Counter[int] = Counter()
        client = faulty.client()
        for _ in range(40):
            answer = client.get("/orders", params={"limit": 1})
            kind = answer.status_code
            if kind == 200:
                assert answer.content.startswith(b"<br />\n<b>Notice</b>")
            if kind == 500:
                assert errors(answer)[0][0] == 3
            seen[kind] += 1
        assert set(seen) == {200, 429, 500, 502, 503}
        assert faulty.fake().get("/clock").status_code == 200  # never faulted
    finally:
        limited.stop()
        faulty.stop()


def test_the_fake_api_changes_the_shop() -> None:
    shop = start("--orders", "20", "--customers", "5", "--products", "4")
    try:
        api, fake = shop.client(), shop.fake()
        fake.post("/clock", json={"now": "2026-01-15T09:30:00Z"})
        touched = fake.post("/orders/3/touch").json()
        assert touched["date_upd"] == "2026-01-15 10:30:00"  # Paris, winter
        fake.put("/orders/4", json={"current_state": 6})
        assert api.get("/orders/4").json()["order"]["current_state"] == "6"
        fake.put("/products/1", json={"name": {"2": "Nouveau nom"}})
        names = api.get("/products/1").json()["product"]["name"]
        assert names[1] == {"id": "2", "value": "Nouveau nom"}
        abandoned = fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
        order = fake.post("/orders", json={"id_cart": abandoned[0]}).json()
        assert api.get(f"/orders/{order['id']}").json()["order"]["id_cart"] == str(abandoned[0])
        assert abandoned[0] not in fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
        fake.delete("/customers/2", params={"soft": 1})
        assert api.get("/customers/2").json()["customer"]["deleted"] == "1"
        fake.delete("/orders/5")
        assert api.get("/orders/5").status_code == 404
        fake.post("/webservice", json={"enabled": False})
        off = api.get("/orders")
        assert off.status_code == 503 and errors(off)[0][0] == 22
    finally:
        shop.stop()
