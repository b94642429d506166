"""The PrestaShop connector against the fake shop over real localhost HTTP: every stream read
whole and once, resumable from any position, changes read exactly once after the last
position (ties bigger than a page included), positions in UTC whatever the shop's time zone
or version, the lookups a page needs, deletions through id sets, refused keys, retries
through faults, secrets kept out of records, reprs and logs (edge cases no fake produces on
purpose: test_prestashop_client.py)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from itertools import pairwise
from typing import Any

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
from connectors.sources.prestashop import PrestaShopApiError, PrestaShopConfig, PrestaShopConnector
from connectors.sources.prestashop.connector import position_of
from sandbox.shops.prestashop.launch import RunningFakeShop
from sandbox.shops.prestashop.settings import LIMITED_KEY

#: patient in attempts, without the waits (Retry-After is capped to 10 ms)
FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
Start = Callable[..., RunningFakeShop]
ZONE = "Europe/Paris"


def connector(running: RunningFakeShop, **options: Any) -> PrestaShopConnector:
    options.setdefault("retry", FAST)
    return PrestaShopConnector(running.root, options.pop("key", running.key), **options)


def read(running: RunningFakeShop, stream: str, *, after: Position | None = None,
         until: datetime | None = None, **options: Any) -> list[list[RawRecord]]:
    async def pages() -> list[list[RawRecord]]:
        async with connector(running, **options) as source:
            return [page async for page in source.read(stream, after=after, until=until)]

    return asyncio.run(pages())


def flat(pages: list[list[RawRecord]]) -> list[RawRecord]:
    return [record for page in pages for record in page]


def ids(records: list[RawRecord]) -> list[int]:
    return [int(r["id"]) for r in records]


def pos(record: RawRecord, zone: str = ZONE) -> Position:
    return position_of(record, zone)


def every_id(running: RunningFakeShop, stream: str, **options: Any) -> list[str]:
    async def run() -> list[str]:
        async with connector(running, **options) as source:
            return [i async for page in source.ids(stream) for i in page]

    return asyncio.run(run())


# reading whole streams --------------------------------------------------------------------

def test_every_stream_is_read_completely_once_and_ids_lists_the_same(shop: RunningFakeShop) -> None:
    fake = shop.fake()
    expected = {
        "orders": fake.get("/orders/ids").json()["ids"],
        "customers": fake.get("/customers/ids").json()["ids"],
        "products": fake.get("/products/ids").json()["ids"],
        "carts": fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"],
        "addresses": fake.get("/addresses/ids", params={"customers_only": 1}).json()["ids"],
        "carriers": [1, 2, 3, 4, 5], "order_states": list(range(1, 15)),
        "groups": [1, 2, 3, 4, 5], "categories": list(range(1, 11)),
        "manufacturers": [1, 2, 3, 4], "cart_rules": list(range(1, 9)),
    }
    for stream, wanted in expected.items():
        pages = read(shop, stream, page_size=7)  # many pages, ties beyond one
        got = ids(flat(pages))
        assert len(got) == len(set(got)), stream
        assert sorted(got) == sorted(wanted), stream
        assert all(len(p) <= 7 for p in pages), stream
        keys = [pos(r).key() for r in flat(pages)]
        assert all(a < b for a, b in pairwise(keys)), stream
        assert sorted(map(int, every_id(shop, stream, page_size=7))) == sorted(wanted), stream


def test_a_read_resumes_after_any_position(shop: RunningFakeShop) -> None:
    pages = read(shop, "orders", page_size=10)
    records = flat(pages)
    tie_at = Counter(r["date_upd"] for r in records).most_common(1)[0][0]
    in_tie = [i for i, r in enumerate(records) if r["date_upd"] == tie_at]
    assert len(in_tie) > 20  # the bulk edit spans several pages of ten
    for index in (in_tie[len(in_tie) // 2], len(flat(pages[:3])) - 1, 0, len(records) - 1):
        rest = flat(read(shop, "orders", after=pos(records[index]), page_size=10))
        assert ids(rest) == ids(records[index + 1:])


def test_until_bounds_what_is_read(shop: RunningFakeShop) -> None:
    records = flat(read(shop, "orders"))
    until = pos(records[120]).changed_at
    window = flat(read(shop, "orders", after=pos(records[40]), until=until, page_size=25))
    assert ids(window) == [r["id"] for r in records[41:] if pos(r).changed_at <= until]
    assert read(shop, "orders", until=datetime(2000, 1, 1)) == []
    assert read(shop, "orders", after=pos(records[50]), until=pos(records[10]).changed_at) == []


def test_a_read_by_id_takes_the_records_changed_in_its_span_and_resumes_after_an_id(
    shop: RunningFakeShop
) -> None:
    records = flat(read(shop, "orders"))
    times = sorted(pos(r).changed_at for r in records)
    since, until = times[30], times[-30]
    spanned = sorted((r for r in records if since <= pos(r).changed_at <= until),
                     key=lambda r: int(r["id"]))

    def by_id(after_key: str | None) -> list[RawRecord]:
        async def pages() -> list[list[RawRecord]]:
            async with connector(shop, page_size=10) as source:
                assert source.reads_by_key("orders")
                return [page async for page in source.read_by_key(
                    "orders", after_key=after_key, since=since, until=until)]

        return flat(asyncio.run(pages()))

    assert ids(by_id(None)) == ids(spanned)
    assert ids(by_id(str(spanned[17]["id"]))) == ids(spanned[18:])


def test_positions_are_utc_whatever_the_shops_zone_version_and_languages(start_shop: Start) -> None:
    paris = start_shop("--seed", "4", "--orders", "60")
    new_york = start_shop("--seed", "4", "--orders", "60", "--timezone", "America/New_York",
                          "--version", "8", "--languages", "1")
    here, there = flat(read(paris, "orders")), flat(read(new_york, "orders"))
    assert [r["date_upd"] for r in here] != [r["date_upd"] for r in there]
    assert [pos(r) for r in here] == [pos(r, "America/New_York") for r in there]
    # the connector learns the zone from PS_TIMEZONE when it is not configured
    async def learned() -> str:
        async with connector(new_york) as source:
            await source.check()
            return source.timezone
    assert asyncio.run(learned()) == "America/New_York"
    # one language: multilingual fields come as plain strings, and the shop says which
    state = flat(read(new_york, "order_states"))[1]
    assert state["name"] == "Payment accepted" and state["_shop"]["languages"] == {"1": "en"}


# changes -----------------------------------------------------------------------------------

def test_after_changes_a_read_from_the_last_position_returns_exactly_the_changed(
    start_shop: Start
) -> None:
    running = start_shop("--orders", "120", "--customers", "8", "--products", "16")
    fake = running.fake()
    fake.post("/clock", json={"now": "2026-03-01T10:00:00Z"})
    streams = ("orders", "products", "customers", "carts")
    last = {s: pos(flat(read(running, s))[-1]) for s in streams}

    fake.post("/orders/10/touch")
    fake.put("/orders/20", json={"current_state": 6})
    new_order = fake.post("/orders", json={"id_customer": 3}).json()["id"]
    fake.put("/products/2", json={"price": 12.5})
    fake.put("/customers/4", json={"firstname": "Renamed"})
    abandoned = fake.get("/carts/ids", params={"abandoned": 1}).json()["ids"]
    fake.post("/carts/touch", json={"ids": abandoned[:2]})
    fake.post("/orders", json={"id_cart": abandoned[0]})  # the first one is ordered now

    changed = {s: flat(read(running, s, after=last[s], page_size=3)) for s in streams}
    new_cart = next(o for o in [changed["orders"]] for o in o if o["id"] == new_order)["id_cart"]
    assert sorted(ids(changed["orders"])) == sorted([10, 20, new_order, new_order + 1])
    assert ids(changed["products"]) == [2] and changed["products"][0]["price"] == "12.500000"
    assert ids(changed["customers"]) == [4]
    assert ids(changed["carts"]) == [abandoned[1]]  # not the ordered one, nor the new order's
    assert int(new_cart) not in ids(changed["carts"])
    for stream in streams:
        if changed[stream]:
            assert flat(read(running, stream, after=pos(changed[stream][-1]))) == []


def test_a_tie_bigger_than_several_pages_is_read_once(start_shop: Start) -> None:
    running = start_shop("--orders", "400", "--customers", "5", "--products", "6")
    last = pos(flat(read(running, "orders"))[-1])
    touched = list(range(1, 251))
    running.fake().post("/orders/touch", json={"ids": touched, "at": "2026-02-01T08:00:00Z"})
    pages = read(running, "orders", after=last, page_size=100)
    got = flat(pages)
    assert ids(got) == touched and len(pages) >= 3
    assert {r["date_upd"] for r in got} == {"2026-02-01 09:00:00"}
    middle = pos(got[130])
    assert ids(flat(read(running, "orders", after=middle, page_size=100))) == touched[131:]


def test_deletions_show_in_the_id_sets(start_shop: Start) -> None:
    running = start_shop("--orders", "30", "--customers", "6", "--products", "4")
    fake = running.fake()
    before = {s: set(every_id(running, s)) for s in ("orders", "carts", "customers")}
    fake.delete("/orders/7")
    fake.delete("/customers/3", params={"soft": 1})  # stays, flagged deleted
    cart = min(int(c) for c in before["carts"])
    fake.post("/orders", json={"id_cart": cart})
    after = {s: set(every_id(running, s)) for s in ("orders", "carts", "customers")}
    assert before["orders"] - after["orders"] == {"7"}
    assert before["carts"] - after["carts"] == {str(cart)}
    assert after["customers"] == before["customers"]
    customer = next(c for c in flat(read(running, "customers")) if c["id"] == 3)
    assert customer["deleted"] == "1"


# what the records carry --------------------------------------------------------------------

def test_pages_carry_the_shop_and_their_lookups(shop: RunningFakeShop) -> None:
    orders = flat(read(shop, "orders"))
    assert orders[0]["_shop"]["timezone"] == ZONE
    assert orders[0]["_shop"]["languages"] == {"1": "en", "2": "fr"}
    assert orders[0]["_shop"]["currencies"] == {"1": "EUR", "2": "USD"}
    assert all(o["_customer"]["id"] == int(o["id_customer"]) for o in orders)
    assert "not-an-email" in {o["_customer"]["email"] for o in orders}
    products = flat(read(shop, "products", page_size=5))
    combos = {p["id"]: p["_combinations"] for p in products}
    assert len(combos[1]) == 12 and all(c["id_product"] == "1" for c in combos[1])
    assert combos[1][0]["_options"][0]["group"][1] == {"id": "2", "value": "Taille"}
    carts = flat(read(shop, "carts"))
    rows = [row for c in carts for row in c.get("associations", {}).get("cart_rows", [])]
    assert rows and all(isinstance(row["_unit_price"], float) for row in rows)
    addresses = flat(read(shop, "addresses"))
    assert {a["_country"] for a in addresses} <= {"FR", "BE", "CH", "DE", "ES", "IT", "PL", "GB", "US"}
    customers = flat(read(shop, "customers"))
    for record in customers + orders + carts:  # secrets the webservice shows are dropped
        assert not {"passwd", "secure_key", "reset_password_token"} & record.keys()


def test_chosen_languages_are_asked_for_and_collapse_to_strings(shop: RunningFakeShop) -> None:
    states = flat(read(shop, "order_states", languages=["fr"]))
    assert states[1]["name"] == "Paiement accepté"
    assert states[1]["_shop"]["languages"] == {"2": "fr"}
    with pytest.raises(SourceError, match="the shop has no language xx; it has de, en, es, fr"):
        read(shop, "order_states", languages=["xx"])


# refusals ------------------------------------------------------------------------------

def test_refused_keys_raise_source_auth_error(shop: RunningFakeShop) -> None:
    async def attempt(key: str, message: str, **options: Any) -> None:
        async with connector(shop, key=key, **options) as source:
            with pytest.raises(SourceAuthError, match=message):
                await source.check()

    asyncio.run(attempt("WRONGKEYWRONGKEYWRONGKEYWRONGKEY", r"not active \(code 20\)"))
    asyncio.run(attempt("WRONGKEYWRONGKEYWRONGKEYWRONGKEY", r"not active \(code 20\)",
                        ws_key_in_query=True))

    async def limited() -> None:
        async with connector(shop, key=LIMITED_KEY, timezone=ZONE) as source:
            await source.check()  # PS_TIMEZONE is out of reach, but the zone is configured
            with pytest.raises(SourceAuthError, match="may not read customers"):
                async for _ in source.read("customers"):
                    pass
        async with connector(shop, key=LIMITED_KEY) as source:
            with pytest.raises(SourceError, match="set connection.options.timezone"):
                await source.check()

    asyncio.run(limited())


def test_ws_key_in_the_query_reads_the_same_records(shop: RunningFakeShop) -> None:
    assert read(shop, "customers", ws_key_in_query=True) == read(shop, "customers")


def test_unknown_streams_are_refused_plainly(shop: RunningFakeShop) -> None:
    source = connector(shop)
    try:
        with pytest.raises(UnsupportedStream, match="PrestaShop has no stream 'coupons'"):
            source.read("coupons")
        incremental = {n for n, s in source.streams().items() if s.incremental}
        assert incremental == set(source.streams()) - {"order_states", "carriers"}
    finally:
        asyncio.run(source.aclose())


def test_config_rules() -> None:
    with pytest.raises(ValidationError, match="must use https"):
        PrestaShopConfig(base_url="http://shop.example", key="K" * 32)
    with pytest.raises(ValidationError, match="32 letters and digits"):
        PrestaShopConfig(base_url="https://shop.example", key="short")
    with pytest.raises(ValidationError, match="unknown time zone 'Mars/Olympus'"):
        PrestaShopConfig(base_url="https://shop.example", key="K" * 32, timezone="Mars/Olympus")
    config = PrestaShopConfig(base_url="https://shop.example/", key="K" * 32)
    assert (config.base_url, config.shop_url) == ("https://shop.example/api", "https://shop.example")
    assert PrestaShopConfig(base_url="http://127.0.0.1:8790/api/", key="K" * 32).base_url == \
        "http://127.0.0.1:8790/api"


# faults and secrets ----------------------------------------------------------------------

def test_reads_survive_injected_faults_and_never_log_the_key(
    start_shop: Start, caplog: pytest.LogCaptureFixture
) -> None:
    running = start_shop("--fault-rate", "0.3", "--seed", "11", "--retry-after", "0")
    caplog.set_level(logging.DEBUG)
    fake = running.fake()
    for in_query in (False, True):
        orders = flat(read(running, "orders", page_size=25, ws_key_in_query=in_query))
        assert sorted(ids(orders)) == sorted(fake.get("/orders/ids").json()["ids"])
    products = flat(read(running, "products", page_size=10))
    assert sorted(ids(products)) == sorted(fake.get("/products/ids").json()["ids"])
    retried = [r.getMessage() for r in caplog.records if r.getMessage().startswith("retrying")]
    assert {"429", "500", "502", "503"} <= {w for m in retried for w in m.split()}
    assert any("PHP printed notices" in r.getMessage() for r in caplog.records)

    source = connector(running, ws_key_in_query=True)
    try:
        for text in (caplog.text, repr(source), repr(source.config), str(source.config),
                     repr(source.client), repr(source.client._http._transport)):
            assert running.key not in text
    finally:
        asyncio.run(source.aclose())


def test_a_disabled_webservice_is_not_retried(start_shop: Start) -> None:
    running = start_shop("--orders", "5")
    running.fake().post("/webservice", json={"enabled": False})

    async def run() -> None:
        async with connector(running) as source:
            with pytest.raises(PrestaShopApiError, match="webservice is disabled") as caught:
                await source.check()
            assert caught.value.code == 22 and source.client.requests == 1

    asyncio.run(run())
