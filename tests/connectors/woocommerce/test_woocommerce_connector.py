"""The WooCommerce connector against the fake shop over real localhost HTTP: every stream
read whole and once, resumable from any position, changes read exactly once after the last
position (ties bigger than a page included), carts refused plainly, bad credentials, retries
through injected faults, secrets kept out of reprs and logs. Edge cases no fake produces on
purpose (a WAF's HTML 403, a server ignoring ``modified_after``, a redirect) use an
``httpx.MockTransport`` behind the real client."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from itertools import pairwise
from typing import Any

import httpx
import orjson
import pytest
from pydantic import ValidationError

from connectors.http.retry import RetryPolicy
from connectors.sources.base import (
    Position,
    RawRecord,
    SourceAuthError,
    SourceError,
    UnsupportedStream,
)
from connectors.sources.woocommerce import WooCommerceConfig, WooCommerceConnector
from connectors.sources.woocommerce.connector import position_of
from sandbox.shops.woocommerce.launch import RunningFakeShop

#: patient in attempts, without the waits (Retry-After is capped to 10 ms)
FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
Start = Callable[..., RunningFakeShop]


def connector(running: RunningFakeShop, **options: Any) -> WooCommerceConnector:
    options.setdefault("retry", FAST)
    return WooCommerceConnector(running.root, running.key, running.secret, **options)


def read(running: RunningFakeShop, stream: str, *, after: Position | None = None,
         until: datetime | None = None, **options: Any) -> list[list[RawRecord]]:
    """Every page of ``stream``, read by a fresh connector."""

    async def pages() -> list[list[RawRecord]]:
        async with connector(running, **options) as source:
            return [page async for page in source.read(stream, after=after, until=until)]

    return asyncio.run(pages())


def flat(pages: list[list[RawRecord]]) -> list[RawRecord]:
    return [record for page in pages for record in page]


def ids(records: list[RawRecord]) -> list[int]:
    return [r["id"] for r in records]


def ascending(stream: str, records: list[RawRecord]) -> bool:
    keys = [position_of(stream, r).key() for r in records]
    return all(a < b for a, b in pairwise(keys))


# reading whole streams --------------------------------------------------------------------

def test_every_stream_is_read_completely_and_exactly_once(shop: RunningFakeShop) -> None:
    fake, api = shop.fake(), shop.client()
    drafts = {o["id"] for o in api.get("/orders", params={"status": "checkout-draft"}).json()}
    expected = {
        "orders": set(fake.get("/orders/ids").json()["ids"]) - drafts,  # trash included
        "products": set(fake.get("/products/ids").json()["ids"]),  # trash included
        "coupons": set(fake.get("/coupons/ids").json()["ids"]),
        "customers": set(fake.get("/customers/ids").json()["ids"]) - {1},  # not the admin
        "categories": set(fake.get("/categories/ids").json()["ids"]),
    }
    for stream, wanted in expected.items():
        pages = read(shop, stream, page_size=7)  # many pages, ties and variations beyond one
        got = ids(flat(pages))
        assert len(got) == len(set(got)), stream
        assert set(got) == wanted, stream
        assert all(len(p) <= 7 for p in pages)
        if stream in ("orders", "products", "coupons"):
            assert ascending(stream, flat(pages)), stream
    statuses = flat(read(shop, "statuses"))
    assert {s["slug"] for s in statuses} >= {"pending", "processing", "completed", "refunded"}

    products = flat(read(shop, "products", page_size=7))
    assert {p["status"] for p in products} >= {"publish", "trash", "draft", "private"}
    for product in products:
        assert ids(product["_variations"]) == (product["variations"] if product["status"] != "trash" else [])
    assert max(len(p["_variations"]) for p in products) == 12


def test_a_read_resumes_after_any_position(shop: RunningFakeShop) -> None:
    pages = read(shop, "orders", page_size=10)
    records = flat(pages)
    tie_at = Counter(r["date_modified_gmt"] for r in records).most_common(1)[0][0]
    in_tie = [i for i, r in enumerate(records) if r["date_modified_gmt"] == tie_at]
    assert len(in_tie) > 10  # the bulk edit spans several pages of ten
    checkpoint_after_page_3 = len(flat(pages[:3])) - 1
    for index in (in_tie[len(in_tie) // 2], checkpoint_after_page_3, 0, len(records) - 1):
        after = position_of("orders", records[index])
        rest = flat(read(shop, "orders", after=after, page_size=10))
        assert ids(rest) == ids(records[index + 1:])


def test_until_bounds_what_is_read(shop: RunningFakeShop) -> None:
    records = flat(read(shop, "orders"))
    until = position_of("orders", records[120]).changed_at
    after = position_of("orders", records[40])
    window = flat(read(shop, "orders", after=after, until=until, page_size=25))
    expected = [r for r in records[41:] if position_of("orders", r).changed_at <= until]
    assert ids(window) == ids(expected)
    assert ids(flat(read(shop, "coupons", until=datetime(2000, 1, 1)))) == []


# changes ---------------------------------------------------------------------------------

def test_after_changes_a_read_from_the_last_position_returns_exactly_the_changed(start_shop: Start) -> None:
    running = start_shop("--orders", "120", "--customers", "8", "--products", "16")
    fake, api = running.fake(), running.client()
    fake.post("/clock", json={"now": "2026-03-01T10:00:00"})
    streams = ("orders", "products", "coupons")
    last = {s: position_of(s, flat(read(running, s))[-1]) for s in streams}

    fake.post("/orders/1010/touch")
    fake.put("/orders/1020", json={"status": "cancelled"})
    new_order = fake.post("/orders", json={"customer_id": 3}).json()["id"]
    fake.delete("/orders/1030")
    products = api.get("/products", params={"status": "publish", "per_page": 100,
                                            "orderby": "id", "order": "asc"}).json()
    simple = next(p for p in products if p["type"] == "simple")
    variable = next(p for p in products if p["type"] == "variable")
    trashed = next(p for p in products if p["type"] == "simple" and p["id"] != simple["id"])
    fake.put(f"/products/{simple['id']}", json={"regular_price": "12.00"})
    fake.post(f"/variations/{variable['variations'][0]}/touch")  # bumps its product too
    fake.delete(f"/products/{trashed['id']}")
    new_coupon = fake.post("/coupons", json={"code": "spring-2026"}).json()["id"]

    changed = {s: flat(read(running, s, after=last[s], page_size=3)) for s in streams}
    assert sorted(ids(changed["orders"])) == sorted([1010, 1020, 1030, new_order])
    assert {o["id"]: o["status"] for o in changed["orders"]}[1030] == "trash"
    assert sorted(ids(changed["products"])) == sorted([simple["id"], variable["id"], trashed["id"]])
    assert {p["id"]: p["regular_price"] for p in changed["products"]}[simple["id"]] == "12.00"
    assert ids(changed["coupons"]) == [new_coupon]
    for stream in streams:
        latest = position_of(stream, changed[stream][-1])
        assert flat(read(running, stream, after=latest)) == []


def test_a_tie_bigger_than_several_pages_is_read_once(start_shop: Start) -> None:
    running = start_shop("--orders", "400", "--customers", "5", "--products", "12")
    fake = running.fake()
    last = position_of("orders", flat(read(running, "orders"))[-1])
    touched = list(range(1001, 1251))
    fake.post("/orders/touch", json={"ids": touched, "at": "2026-02-01T08:00:00"})
    pages = read(running, "orders", after=last, page_size=100)
    got = flat(pages)
    drafts = {o["id"] for o in running.client().get("/orders", params={"status": "checkout-draft"}).json()}
    assert ids(got) == [i for i in touched if i not in drafts]
    assert ascending("orders", got)
    assert len(pages) >= 3
    # resuming in the middle of the tie
    middle = position_of("orders", got[130])
    assert ids(flat(read(running, "orders", after=middle, page_size=100))) == ids(got[131:])


def listed_ids(running: RunningFakeShop, stream: str, **options: Any) -> list[str]:
    """Every id ``ids(stream)`` lists, read by a fresh connector."""

    async def pages() -> list[str]:
        async with connector(running, **options) as source:
            return [i async for page in source.ids(stream) for i in page]

    return asyncio.run(pages())


def test_ids_list_what_a_read_returns_so_records_deleted_for_good_are_found(
    start_shop: Start,
) -> None:
    """WooCommerce keeps no log of deletions: a record deleted for good is only missing."""
    running = start_shop("--orders", "60", "--customers", "8", "--products", "12")
    fake = running.fake()
    streams = ("orders", "products", "coupons", "customers", "categories", "statuses")
    before = {s: set(listed_ids(running, s)) for s in streams}
    gone = {s: sorted(before[s], key=int)[1] for s in ("orders", "products", "coupons",
                                                       "customers", "categories")}
    for stream, record_id in gone.items():
        path = "products/categories" if stream == "categories" else stream
        fake.delete(f"/{stream}/{record_id}", params={"force": "true"})
        assert running.client().get(f"/{path}/{record_id}").status_code == 404
    trashed_coupon = sorted(before["coupons"], key=int)[2]
    fake.delete(f"/coupons/{trashed_coupon}")  # trashed coupons are not listed: gone too

    for stream in streams:
        now = listed_ids(running, stream)
        read_now = [position_of(stream, r).record_id for r in flat(read(running, stream))]
        assert sorted(now) == sorted(read_now), stream
        assert len(set(now)) == len(now), stream
    assert {s: before[s] - set(listed_ids(running, s)) for s in gone} == {
        s: {record_id} for s, record_id in gone.items()} | {"coupons": {gone["coupons"],
                                                                      trashed_coupon}}
    assert fake.get("/orders/ids").json()["statuses"].get("trash"), "the shop has trash"
    assert set(listed_ids(running, "orders", include_trash=False)) < set(
        listed_ids(running, "orders"))


# what the connector refuses --------------------------------------------------------------

def test_carts_are_refused_plainly(shop: RunningFakeShop) -> None:
    source = connector(shop)
    try:
        with pytest.raises(UnsupportedStream, match="WooCommerce has no carts API"):
            source.read("carts")
        with pytest.raises(UnsupportedStream, match="WooCommerce has no carts API"):
            source.position("carts", {})
        with pytest.raises(UnsupportedStream, match="streams: orders, products, coupons"):
            source.read("manufacturers")
        assert "carts" not in source.streams()
        assert {n for n, s in source.streams().items() if s.incremental} == {"orders", "products", "coupons"}
    finally:
        asyncio.run(source.aclose())


@pytest.mark.parametrize(("key", "secret", "message"), [
    ("ck_wrong", "cs_shopsync_fake", "Consumer key is invalid."),
    ("ck_shopsync_fake", "cs_wrong", "Consumer secret is invalid."),
])
@pytest.mark.parametrize("in_query", [False, True], ids=["basic", "query-string"])
def test_refused_credentials_raise_source_auth_error(
    shop: RunningFakeShop, key: str, secret: str, message: str, in_query: bool
) -> None:
    async def attempt() -> None:
        async with WooCommerceConnector(shop.root, key, secret, retry=FAST,
                                        query_string_auth=in_query) as source:
            with pytest.raises(SourceAuthError, match=message):
                await source.check()
            with pytest.raises(SourceAuthError, match=message):
                async for _ in source.read("customers"):
                    pass

    asyncio.run(attempt())


def test_query_string_auth_reads_the_same_records(shop: RunningFakeShop) -> None:
    assert read(shop, "customers", query_string_auth=True) == read(shop, "customers")


def test_https_is_required_except_on_loopback() -> None:
    with pytest.raises(ValidationError, match="must use https"):
        WooCommerceConfig(base_url="http://shop.example", consumer_key="k", consumer_secret="s")
    config = WooCommerceConfig(base_url="https://shop.example/", consumer_key="k", consumer_secret="s")
    assert config.base_url == "https://shop.example/wp-json/wc/v3"
    local = WooCommerceConfig(base_url="http://127.0.0.1:8788/wp-json/wc/v3/",
                              consumer_key="k", consumer_secret="s")
    assert local.base_url == "http://127.0.0.1:8788/wp-json/wc/v3"


# faults and secrets ----------------------------------------------------------------------

def test_reads_survive_injected_faults_and_never_log_the_secrets(
    start_shop: Start, caplog: pytest.LogCaptureFixture
) -> None:
    running = start_shop("--fault-rate", "0.3", "--seed", "11", "--retry-after", "0")
    caplog.set_level(logging.DEBUG)
    fake = running.fake()
    drafts = 1  # the generated checkout-draft order
    for in_query in (False, True):
        orders = flat(read(running, "orders", page_size=25, query_string_auth=in_query))
        assert len(set(ids(orders))) == len(orders) == len(fake.get("/orders/ids").json()["ids"]) - drafts
    products = flat(read(running, "products", page_size=10))
    assert set(ids(products)) == set(fake.get("/products/ids").json()["ids"])
    retried = [r for r in caplog.records if r.getMessage().startswith("retrying")]
    assert len(retried) >= 5
    assert {"403", "429", "502", "503"} <= {w for r in retried for w in r.getMessage().split()}

    source = connector(running, query_string_auth=True)
    try:
        for text in (caplog.text, repr(source), repr(source.config), str(source.config),
                     repr(source.client), repr(source.client._http._transport)):
            assert running.secret not in text
            assert running.key not in text
    finally:
        asyncio.run(source.aclose())


# edge cases on a mock transport ----------------------------------------------------------

def mock_source(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> WooCommerceConnector:
    return WooCommerceConnector("http://127.0.0.1:9", "ck_x", "cs_y", retry=FAST,
                                transport=httpx.MockTransport(handler), **options)


def json_answer(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=orjson.dumps(body),
                          headers={"content-type": "application/json", **headers})


def test_a_waf_page_is_retried_but_a_woocommerce_403_is_not() -> None:
    calls: list[str] = []
    answers = [httpx.Response(403, text="<html>Attention Required! | Cloudflare</html>"),
               httpx.Response(200, text="<html>Just a moment...</html>"),
               json_answer([{"id": 1}], **{"x-wp-total": "1"})]

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        assert request.headers["authorization"].startswith("Basic ")
        return answers.pop(0) if answers else json_answer(
            {"code": "woocommerce_rest_cannot_view", "message": "Sorry, you cannot list resources.",
             "data": {"status": 403}}, 403)

    async def run() -> None:
        async with mock_source(handler) as source:
            await source.check()
            assert len(calls) == 3
            with pytest.raises(SourceAuthError, match="cannot list resources"):
                await source.check()
            assert len(calls) == 4

    asyncio.run(run())


def test_a_server_ignoring_modified_after_fails_instead_of_looping() -> None:
    page = [{"id": i, "date_modified_gmt": f"2025-01-0{i}T00:00:00"} for i in (1, 2)]

    async def run() -> None:
        async with mock_source(lambda request: json_answer(page), page_size=2,
                               include_trash=False) as source:
            with pytest.raises(SourceError, match="ignores modified_after"):
                async for _ in source.read("coupons", after=position_of("coupons", page[0])):
                    pass

    asyncio.run(run())


def test_redirects_are_not_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"location": "https://elsewhere.example/wp-json/wc/v3/orders"})

    async def run() -> None:
        async with mock_source(handler) as source:
            with pytest.raises(SourceError, match="redirected to 'https://elsewhere.example"):
                await source.check()

    asyncio.run(run())

