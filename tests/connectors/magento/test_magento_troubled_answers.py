"""The Magento connector when the shop's answers are not plain pages of records: injected
faults retried until everything is read, and edge cases no fake produces on purpose (a
WAF's HTML 403, a server ignoring the filters, Magento errors, a redirect, the keyset
request's filter groups), which use an ``httpx.MockTransport`` behind the real client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest

from connectors.sources.base import Position, RawRecord, SourceError
from connectors.sources.magento import MagentoApiError, MagentoConnector
from connectors.sources.magento.connector import ENDPOINTS
from tests.connectors.magento.support import FAST, Start, keys, read


def test_faults_are_retried_until_everything_is_read(start_shop: Start) -> None:
    running = start_shop("--orders", "80", "--fault-rate", "0.3", "--retry-after", "0")
    expected = {str(i) for i in running.fake().get("/orders/ids").json()["ids"]}
    assert sorted(keys("orders", read(running, "orders", page_size=9))) == sorted(expected)


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
