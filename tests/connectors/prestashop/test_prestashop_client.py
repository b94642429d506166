"""The PrestaShop connector on an ``httpx.MockTransport`` behind the real client, for what no
fake produces on purpose: a 401 from a server that stripped the Authorization header, a server
ignoring the date filter, rows outside the window, XML, redirects, and request pacing."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from connectors.http.retry import RetryPolicy
from connectors.sources.base import RawRecord, SourceAuthError, SourceError
from connectors.sources.prestashop import PrestaShopApiError, PrestaShopConnector
from connectors.sources.prestashop.connector import position_of

FAST = RetryPolicy(max_attempts=12, initial_backoff=0.001, max_backoff=0.01, jitter=0.005,
                   max_retry_after=0.01)
ZONE = "Europe/Paris"


def mock_source(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> PrestaShopConnector:
    options.setdefault("timezone", ZONE)
    return PrestaShopConnector("http://127.0.0.1:9", "K" * 32, retry=FAST,
                               transport=httpx.MockTransport(handler), **options)


def json_answer(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=orjson.dumps(body),
                          headers={"content-type": "application/json", **headers})


def shop_tables(request: httpx.Request) -> httpx.Response | None:
    path = request.url.path.removeprefix("/api/")
    if path == "languages":
        return json_answer({"languages": [{"id": 1, "iso_code": "en", "active": "1"}]})
    if path == "currencies":
        return json_answer({"currencies": [{"id": 1, "iso_code": "EUR"}]})
    if path == "configurations":
        return json_answer([])
    return None


def test_a_plain_401_names_the_stripped_authorization_header() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        # the key is the Basic user name, with an empty password
        assert request.headers["authorization"] == "Basic " + base64.b64encode(b"K" * 32 + b":").decode()
        return httpx.Response(401, text="401 Unauthorized")

    async def run() -> None:
        async with mock_source(handler) as source:
            with pytest.raises(SourceAuthError, match="ws_key_in_query: true"):
                await source.check()

    asyncio.run(run())


def test_a_server_ignoring_the_date_filter_fails_instead_of_looping() -> None:
    page = [{"id": i, "date_upd": f"2025-01-0{i} 00:00:00"} for i in (1, 2)]

    def handler(request: httpx.Request) -> httpx.Response:
        return shop_tables(request) or json_answer({"groups": page})

    async def run() -> None:
        async with mock_source(handler, page_size=2) as source:
            with pytest.raises(SourceError, match="ignores filter\\[date_upd\\]"):
                async for _ in source.read("groups", after=position_of(page[1], ZONE)):
                    pass

    asyncio.run(run())


def test_rows_outside_the_window_are_dropped_and_both_empty_forms_read() -> None:
    rows = [{"id": 1, "date_upd": "2025-01-01 00:00:00"}, {"id": 2, "date_upd": "2025-01-05 00:00:00"}]
    answers = [{"groups": rows}, []]

    def handler(request: httpx.Request) -> httpx.Response:
        return shop_tables(request) or json_answer(answers.pop(0) if answers else {"groups": []})

    async def run() -> list[RawRecord]:
        async with mock_source(handler, page_size=10) as source:
            until = position_of(rows[0], ZONE).changed_at
            return [r async for page in source.read("groups", until=until) for r in page]

    assert [r["id"] for r in asyncio.run(run())] == [1]


def test_xml_and_redirects_are_refused() -> None:
    def xml(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text='<?xml version="1.0"?><prestashop/>')

    def moved(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"location": "https://elsewhere.example/api/languages"})

    async def run() -> None:
        async with mock_source(xml) as source:
            with pytest.raises(PrestaShopApiError, match="answered XML although JSON"):
                await source.check()
        async with mock_source(moved) as source:
            with pytest.raises(SourceError, match="redirected to 'https://elsewhere.example"):
                await source.check()

    asyncio.run(run())


def test_requests_are_paced_to_the_budget_given() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return json_answer({"languages": [{"id": 1, "iso_code": "en", "active": "1"}]})

    async def run() -> float:
        async with mock_source(handler, requests_per_second=50) as source:
            started = time.monotonic()
            await asyncio.gather(*(source.client.get("languages") for _ in range(11)))
            return time.monotonic() - started

    assert asyncio.run(run()) >= 0.19  # ten intervals of 20 ms
