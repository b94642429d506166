"""The Magento connector against the fake shop over real localhost HTTP: every stream read
whole and once, resumable from any position, changes read exactly once after the last
position (ties bigger than a page included, a record changed mid-read included), UTC
positions, cart items resolved to product ids, configurable children (and parents re-read
when only a child changed), id listings for deletions, tokens refused plainly, retries
through injected faults. Edge cases no fake
produces on purpose (a WAF's HTML 403, a server ignoring the filters, a redirect) use an
``httpx.MockTransport`` behind the real client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import httpx
import orjson
import pytest

from connectors.http.retry import RetryPolicy
from connectors.sources.base import (
    Position,
    RawRecord,
    SourceAuthError,
    SourceError,
    UnsupportedStream,
)
from connectors.sources.magento import MagentoApiError, MagentoConnector
from connectors.sources.magento.connector import DEFAULT_STATUSES, ENDPOINTS, position_of
from sandbox.shops.magento.launch import RunningFakeMagento, start_in_thread

#: patient in attempts, without the waits (Retry-After is capped to 10 ms)
FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
INCREMENTAL = ("orders", "customers", "products", "carts", "categories")
Start = Callable[..., RunningFakeMagento]


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeMagento]:
    """The default fake shop (seed 0: 50 customers, 200 orders, 30 products), never changed."""
    running = start_in_thread()
    yield running
    running.stop()


@pytest.fixture
def start_shop() -> Iterator[Start]:
    """Start shops of one test (to change them, or with faults); all stop after the test."""
    started: list[RunningFakeMagento] = []

    def _start(*args: str) -> RunningFakeMagento:
        started.append(start_in_thread(*args))
        return started[-1]

    yield _start
    for running in started:
        running.stop()


def connector(running: RunningFakeMagento, **options: Any) -> MagentoConnector:
    options.setdefault("retry", FAST)
    return MagentoConnector(running.api_url, options.pop("token", running.token), **options)


def read(running: RunningFakeMagento, stream: str, *, after: Position | None = None,
         until: datetime | None = None, **options: Any) -> list[RawRecord]:
    async def records() -> list[RawRecord]:
        async with connector(running, **options) as source:
            return [r async for page in source.read(stream, after=after, until=until) for r in page]

    return asyncio.run(records())


def listed_ids(running: RunningFakeMagento, stream: str, **options: Any) -> list[str]:
    async def ids() -> list[str]:
        async with connector(running, **options) as source:
            return [i async for page in source.ids(stream) for i in page]

    return asyncio.run(ids())


def keys(stream: str, records: list[RawRecord]) -> list[str]:
    return [position_of(stream, r).record_id for r in records]


def ascending(stream: str, records: list[RawRecord]) -> bool:
    return all(a < b for a, b in pairwise(position_of(stream, r) for r in records))


# reading whole streams --------------------------------------------------------------------

@pytest.mark.parametrize("stream", INCREMENTAL)
def test_every_stream_is_read_completely_once_in_position_order(shop, stream) -> None:
    expected = {str(i) for i in shop.fake().get(f"/{stream}/ids").json()["ids"]}
    records = read(shop, stream, page_size=7)
    assert sorted(keys(stream, records)) == sorted(expected)
    assert ascending(stream, records)
    assert sorted(listed_ids(shop, stream, page_size=7), key=int) == sorted(expected, key=int)


def test_statuses_are_magentos_defaults_plus_the_configured_ones(shop) -> None:
    records = read(shop, "statuses", order_statuses={"ready_for_pickup": "Ready for Pickup",
                                                     "complete": "Done"})
    labels = {r["status"]: r["label"] for r in records}
    assert len(labels) == len(DEFAULT_STATUSES) + 1
    assert labels["ready_for_pickup"] == "Ready for Pickup" and labels["complete"] == "Done"
    assert labels["holded"] == "On Hold"
    assert sorted(listed_ids(shop, "statuses", order_statuses={"ready_for_pickup": "R"})) == sorted(
        labels)


def test_a_read_resumes_after_any_position_with_exactly_the_rest(shop) -> None:
    records = read(shop, "orders", page_size=25)
    for cut in (0, 1, 57, len(records) // 2, len(records) - 1):
        after = position_of("orders", records[cut])
        rest = read(shop, "orders", after=after, page_size=25)
        assert keys("orders", rest) == keys("orders", records[cut + 1:]), cut


def test_ties_bigger_than_a_page_are_walked_by_id(shop) -> None:
    records = read(shop, "products", page_size=3)
    seconds = [position_of("products", r).changed_at for r in records]
    assert max(seconds.count(s) for s in set(seconds)) > 3
    tied = seconds[[seconds.count(s) for s in seconds].index(max(seconds.count(s) for s in seconds))]
    first = next(i for i, s in enumerate(seconds) if s == tied)
    rest = read(shop, "products", after=position_of("products", records[first + 1]), page_size=3)
    assert keys("products", rest) == keys("products", records[first + 2:])


def test_until_bounds_the_read_and_a_fractional_after_starts_at_the_next_second(shop) -> None:
    records = read(shop, "customers")
    times = sorted({position_of("customers", r).changed_at for r in records})
    middle = times[len(times) // 2]
    upto = read(shop, "customers", until=middle + timedelta(microseconds=500_000))
    assert keys("customers", upto) == [position_of("customers", r).record_id for r in records
                                       if position_of("customers", r).changed_at <= middle]
    after = Position(middle - timedelta(microseconds=1))
    assert keys("customers", read(shop, "customers", after=after)) == [
        position_of("customers", r).record_id for r in records
        if position_of("customers", r).changed_at >= middle]


# changes ------------------------------------------------------------------------------------

def test_changes_are_read_exactly_once_after_the_last_position(start_shop: Start) -> None:
    running = start_shop("--orders", "60", "--seed", "3")
    before = read(running, "orders", page_size=10)
    last = position_of("orders", before[-1])
    fake = running.fake()
    fake.post("/clock", json={"now": "2026-01-15 08:00:00"})
    fake.post("/orders/touch", json={"ids": [9, 4, 30, 17]})  # four at one second
    fake.post("/clock", json={"advance": 1})
    fake.put("/orders/12", json={"status": "closed", "state": "closed"})
    fake.post("/clock", json={"advance": 1})
    created = fake.post("/orders", json={}).json()

    changed = read(running, "orders", after=last, page_size=2)

    assert keys("orders", changed) == ["4", "9", "17", "30", "12", str(created["entity_id"])]
    assert {c["updated_at"] for c in changed[:4]} == {"2026-01-15 08:00:00"}
    assert read(running, "orders", after=position_of("orders", changed[-1])) == []


def test_a_record_changed_between_two_pages_is_read_once_at_its_new_place(start_shop: Start) -> None:
    running = start_shop("--orders", "40", "--seed", "4")
    everything = keys("orders", read(running, "orders"))
    late = everything[3]  # not read yet when the first page of 2 comes back
    fake = running.fake()
    requests = 0

    def touch_after_first(request: httpx.Request) -> None:
        nonlocal requests
        requests += 1
        if requests == 2:
            fake.post(f"/orders/{late}/touch")

    transport = httpx.AsyncHTTPTransport()
    hooked = _Hooked(transport, touch_after_first)
    records = read(running, "orders", page_size=2, transport=hooked)

    assert sorted(keys("orders", records), key=int) == sorted(everything, key=int)
    assert keys("orders", records)[-1] == late


class _Hooked(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, before: Callable[[httpx.Request], None]):
        self.inner, self.before = inner, before

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.to_thread(self.before, request)
        return await self.inner.handle_async_request(request)


def test_positions_are_utc_whatever_the_store_timezone(start_shop: Start) -> None:
    running = start_shop("--orders", "5", "--timezone", "America/Los_Angeles")
    fake = running.fake()
    fake.post("/clock", json={"now": "2025-07-01 10:00:00"})
    fake.post("/customers/2/touch")
    (record,) = [r for r in read(running, "customers") if r["id"] == 2]
    assert position_of("customers", record) == Position(datetime(2025, 7, 1, 10, tzinfo=UTC), "2")


# enrichments --------------------------------------------------------------------------------

def test_cart_items_carry_the_id_of_the_product_their_sku_names(shop) -> None:
    by_sku = {p["sku"]: p["id"] for p in read(shop, "products", variations=False)}
    carts = read(shop, "carts", page_size=20)
    items = [i for c in carts for i in c["items"]]
    assert items and all(i["_product_id"] == by_sku[i["sku"]] for i in items)
    active = read(shop, "carts", active_carts_only=True)
    assert active and all(c["is_active"] for c in active)
    assert len(active) < len(carts)


def test_configurable_products_carry_their_children(shop) -> None:
    products = {p["sku"]: p for p in read(shop, "products")}
    tee = products["TEE Été"]
    assert [c["id"] for c in tee["_children"]] == (
        tee["extension_attributes"]["configurable_product_links"])
    assert all(p["_children"] == [] for p in products.values() if p["type_id"] != "configurable")
    assert "_children" not in read(shop, "products", variations=False)[0]


def requests_made(running: RunningFakeMagento) -> int:
    return int(running.fake().get("/stats").json()["requests"])


def test_a_changed_child_brings_its_unchanged_parent_back_with_fresh_children(
        start_shop: Start) -> None:
    running = start_shop("--products", "12", "--seed", "5")
    before = read(running, "products")
    last = position_of("products", before[-1])
    tee = next(p for p in before if p["sku"] == "TEE Été")
    child = tee["extension_attributes"]["configurable_product_links"][1]
    fake = running.fake()
    fake.put(f"/products/{child}", json={"price": 77.5})
    baseline = requests_made(running)

    changed = read(running, "products", after=last)

    # the products page, the child -> parent map, the parent's search, its children
    assert requests_made(running) - baseline == 4
    assert keys("products", changed) == [str(tee["id"]), str(child)]
    assert ascending("products", changed)
    parent, simple = changed
    assert position_of("products", parent).changed_at == position_of("products",
                                                                     simple).changed_at
    assert parent["updated_at"] == tee["updated_at"]  # the record as Magento has it
    assert {c["id"]: c["price"] for c in parent["_children"]}[child] == 77.5
    assert read(running, "products", after=position_of("products", changed[-1])) == []
    # a read from the start reads every parent at its own place: nothing re-read
    assert sorted(keys("products", read(running, "products")), key=int) == sorted(
        keys("products", before), key=int)
    # without variations there is nothing to refresh
    assert keys("products", read(running, "products", after=last, variations=False)) == [
        str(child)]


def test_a_parent_changed_itself_or_twice_through_its_children_is_read_once(
        start_shop: Start) -> None:
    running = start_shop("--products", "12", "--seed", "5")
    before = read(running, "products")
    last = position_of("products", before[-1])
    tee = next(p for p in before if p["sku"] == "TEE Été")
    first, second, third = tee["extension_attributes"]["configurable_product_links"][:3]
    fake = running.fake()
    fake.post("/clock", json={"now": "2026-03-01 09:00:00"})
    fake.post(f"/products/{first}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{second}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{tee['id']}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{third}/touch")

    changed = read(running, "products", after=last, page_size=1)

    # read at its own place: its children were fresh then, no need to re-read it
    assert keys("products", changed) == [str(first), str(second), str(tee["id"]), str(third)]

    again = read(running, "products", after=position_of("products", changed[1]), page_size=1)
    # the parent comes back once for the two children changed before its own change
    assert keys("products", read(running, "products", after=last)) == keys("products", changed)
    assert keys("products", again) == [str(tee["id"]), str(third)]

    fake.post("/clock", json={"advance": 1})
    fake.put(f"/products/{first}", json={"name": "Renamed"})
    fake.post("/clock", json={"advance": 1})
    fake.put(f"/products/{second}", json={"name": "Renamed too"})
    refreshed = read(running, "products", after=position_of("products", changed[-1]),
                     page_size=1)
    assert keys("products", refreshed) == [str(tee["id"]), str(first), str(second)]
    assert ascending("products", refreshed)
    names = {c["id"]: c["name"] for c in refreshed[0]["_children"]}
    assert (names[first], names[second]) == ("Renamed", "Renamed too")


def test_a_re_read_parent_never_sorts_at_or_before_the_position_read_after(
        start_shop: Start) -> None:
    """The child ties ``after`` on its second with the parent's id below it: the parent
    moves just past ``after`` and waits until no record of that second is left to read,
    so the cursor never passes one."""
    running = start_shop("--products", "12", "--seed", "5")
    tee = next(p for p in read(running, "products") if p["sku"] == "TEE Été")
    child = tee["extension_attributes"]["configurable_product_links"][0]
    other = next(p["id"] for p in read(running, "products")
                 if p["type_id"] == "simple" and p["id"] > child and p["id"] not in
                 tee["extension_attributes"]["configurable_product_links"])
    fake = running.fake()
    fake.post("/products/touch", json={"ids": [child, other], "at": "2026-03-01 09:00:00"})
    after = Position(datetime(2026, 3, 1, 9, tzinfo=UTC), str(tee["id"]))

    changed = read(running, "products", after=after, page_size=1)

    assert keys("products", changed) == [str(child), str(other), str(tee["id"])]
    assert ascending("products", changed) and after < position_of("products", changed[0])
    assert read(running, "products", after=position_of("products", changed[-1])) == []


# credentials --------------------------------------------------------------------------------

def test_a_wrong_token_is_refused_plainly_with_what_to_check(shop) -> None:
    async def check() -> None:
        async with connector(shop, token="not-the-token") as source:
            await source.check()

    with pytest.raises(SourceAuthError) as caught:
        asyncio.run(check())
    message = str(caught.value)
    assert "The consumer isn't authorized to access Magento_Sales::actions_view." in message
    assert "standalone Bearer tokens" in message and "not-the-token" not in message


def test_an_admin_token_works_where_integration_tokens_are_refused(start_shop: Start) -> None:
    running = start_shop("--orders", "5", "--no-integration-bearer")
    with pytest.raises(SourceAuthError):
        read(running, "orders")
    token = running.client().post("/integration/admin/token", json={
        "username": "admin", "password": "shopsync-fake-admin1"}).json()
    assert len(read(running, "orders", token=token)) == 5


def test_the_token_stays_out_of_reprs_logs_and_errors(shop, caplog) -> None:
    secret = "s3cr3t-token-value"
    source = connector(shop, token=secret)
    assert secret not in repr(source) and secret not in repr(source.config)
    assert secret not in repr(source.client)
    caplog.set_level("DEBUG")

    async def check() -> None:
        async with source:
            await source.check()

    with pytest.raises(SourceAuthError) as caught:
        asyncio.run(check())
    assert secret not in str(caught.value) and secret not in caplog.text


def test_faults_are_retried_until_everything_is_read(start_shop: Start) -> None:
    running = start_shop("--orders", "80", "--fault-rate", "0.3", "--retry-after", "0")
    expected = {str(i) for i in running.fake().get("/orders/ids").json()["ids"]}
    assert sorted(keys("orders", read(running, "orders", page_size=9))) == sorted(expected)


# configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "options", "root"), [
    ("https://shop.example", {}, "https://shop.example/rest/default"),
    ("https://shop.example/", {"store_code": "de"}, "https://shop.example/rest/de"),
    ("https://shop.example/rest/fr/V1/", {}, "https://shop.example/rest/fr"),
    ("https://shop.example/index.php/rest/all", {"store_code": "all"},
     "https://shop.example/index.php/rest/all"),
    ("http://127.0.0.1:8788/rest/default", {}, "http://127.0.0.1:8788/rest/default"),
])
def test_the_rest_root_is_built_from_the_url_and_store_code(url, options, root) -> None:
    assert MagentoConnector(url, "t", **options).config.base_url == root


@pytest.mark.parametrize(("url", "options", "problem"), [
    ("http://shop.example/rest/default", {}, "must use https"),
    ("https://shop.example/rest/fr", {"store_code": "de"}, "names store code 'fr'"),
    ("ftp://shop.example", {}, "http(s) URL"),
    ("https://shop.example", {"page_size": 301}, "less than or equal to 300"),
])
def test_bad_configurations_are_refused_before_any_request(url, options, problem) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        MagentoConnector(url, "t", **options)


def test_streams_magento_cannot_give_are_refused_with_the_reason(shop) -> None:
    source = connector(shop)
    with pytest.raises(UnsupportedStream, match="salesRules/search"):
        source.read("vouchers")
    with pytest.raises(UnsupportedStream, match="streams: orders"):
        source.read("refunds")
    asyncio.run(source.aclose())


# answers no fake gives on purpose -----------------------------------------------------------

def mocked(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> MagentoConnector:
    return MagentoConnector("https://shop.example/rest/default", "t",
                            transport=httpx.MockTransport(handler), retry=FAST, **options)


def page(items: list[dict[str, Any]], total: int) -> httpx.Response:
    return httpx.Response(200, content=orjson.dumps({"items": items, "total_count": total}))


def run_read(source: MagentoConnector, stream: str = "orders") -> list[RawRecord]:
    async def go() -> list[RawRecord]:
        async with source:
            return [r async for p in source.read(stream) for r in p]

    return asyncio.run(go())


def test_a_waf_403_page_and_a_200_html_page_are_retried() -> None:
    answers = [httpx.Response(403, text="<html>Attention Required! | Cloudflare</html>"),
               httpx.Response(200, text="<html>maintenance</html>"),
               page([{"entity_id": 1, "updated_at": "2025-01-01 00:00:00"}], 1)]
    records = run_read(mocked(lambda request: answers.pop(0)))
    assert [r["entity_id"] for r in records] == [1]


def test_a_shop_ignoring_the_filters_is_an_error_not_an_endless_loop() -> None:
    same = [{"entity_id": i, "updated_at": "2025-01-01 00:00:00"} for i in (1, 2)]
    with pytest.raises(SourceError, match="ignores the searchCriteria filters"):
        run_read(mocked(lambda request: page(same, 10), page_size=2))


def test_magento_errors_fill_their_placeholders_and_wrong_roots_say_so() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if "orders" in request.url.path:
            return httpx.Response(400, json={"message": 'Invalid value of "%1" provided for the'
                                                        " %2 field.", "parameters": ["x", "y"]})
        return httpx.Response(404, json={"message": "Request does not match any route."})

    with pytest.raises(MagentoApiError, match='Invalid value of "x" provided for the y field'):
        run_read(mocked(answer))
    with pytest.raises(MagentoApiError, match="the shop's REST root"):
        run_read(mocked(answer), "customers")


def test_redirects_are_not_followed() -> None:
    moved = httpx.Response(301, headers={"location": "https://elsewhere.example/rest/default"})
    with pytest.raises(MagentoApiError, match="redirects are not followed"):
        run_read(mocked(lambda request: moved))


def test_the_keyset_request_carries_the_compound_position_as_two_filter_groups() -> None:
    seen: list[httpx.QueryParams] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.params)
        return page([], 0)

    source = mocked(answer)

    async def go() -> None:
        async with source:
            after = Position(datetime(2025, 3, 1, 12, 0, 5, tzinfo=UTC), "42")
            until = datetime(2025, 3, 2, tzinfo=UTC)
            assert [r async for p in source.read("customers", after=after, until=until) for r in p] == []

    asyncio.run(go())
    params = dict(seen[0])
    group = "searchCriteria[filter_groups]"
    assert params[f"{group}[0][filters][0][field]"] == "updated_at"
    assert params[f"{group}[0][filters][0][value]"] == "2025-03-01 12:00:05"
    assert params[f"{group}[0][filters][0][condition_type]"] == "gteq"
    assert params[f"{group}[1][filters][0][condition_type]"] == "gt"
    assert params[f"{group}[1][filters][1][field]"] == ENDPOINTS["customers"][1]
    assert params[f"{group}[1][filters][1][value]"] == "42"
    assert params[f"{group}[2][filters][0][value]"] == "2025-03-02 00:00:00"
    assert params[f"{group}[2][filters][0][condition_type]"] == "lteq"
    assert params["searchCriteria[sortOrders][0][field]"] == "updated_at"
    assert params["searchCriteria[currentPage]"] == "1"

