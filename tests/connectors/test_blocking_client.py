"""The blocking facade: the async client's methods without ``await``, over the real sandbox."""

from __future__ import annotations

import inspect
import threading

import pytest

from connectors.http.retry import RetryPolicy
from connectors.marketing.blocking import BlockingMarketingClient
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import ClientConfigError, NotFoundError
from connectors.marketing.query import Query
from connectors.marketing.samples import sample_item
from tests.support import new_key, new_kpi_key

#: initial_backoff stays 1 (waits are capped by max_backoff): any other value makes
#: connectors/http/retry.py pass tenacity's deprecated ``initial`` (an error under pytest)
FAST = RetryPolicy(max_attempts=3, initial_backoff=1, max_backoff=0.05, jitter=0.01)


def test_the_facade_offers_every_operation_of_the_async_client():
    public = {
        name for name, fn in inspect.getmembers(MarketingClient, inspect.isfunction)
        if not name.startswith("_") and name != "aclose"
        and (inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn))
    }
    assert len(public) > 55
    for name in public:
        method = getattr(BlockingMarketingClient, name)
        assert not inspect.iscoroutinefunction(method), name
        assert method.__doc__ == getattr(MarketingClient, name).__doc__


def test_calls_pages_and_errors_without_await(sandbox):
    key = new_key()
    with BlockingMarketingClient(sandbox.base_url, key, kpi_api_key=new_kpi_key(),
                                 retry=FAST, query_encoding="json") as client:
        assert key not in repr(client) and repr(client).startswith("BlockingMarketingClient(")
        orders = [sample_item("orders", order_id=f"o{i}", amount=i) for i in range(7)]
        assert client.bulk_save("orders", orders).sent_count == 7
        assert client.get_order("o3")["amount"] == 3
        page = client.list_orders(Query().where("amount", "GREATER_THAN", 4).select("order_id"))
        assert page.data == [{"order_id": "o5"}, {"order_id": "o6"}]
        assert client.list_custom_kpis() == []

        pages = list(client.iter_pages(client.list_orders, page_size=3))
        assert [len(p.data) for p in pages] == [3, 3, 1]
        ids = [r["order_id"] for r in client.iter_records(client.list_orders, page_size=2)]
        assert ids == [f"o{i}" for i in range(7)]
        for record in client.iter_records(client.list_orders, page_size=2):  # noqa: B007
            break  # leaving early closes the async generator on the portal's loop
        assert record["order_id"] == "o0"

        with pytest.raises(NotFoundError):
            client.get_order("nope")
        assert client.stats.requests >= 10
    client.close()  # idempotent


def test_the_facade_is_safe_to_share_between_threads(sandbox):
    with BlockingMarketingClient(sandbox.base_url, new_key(), retry=FAST) as client:
        client.bulk_save("carriers", [sample_item("carriers")])
        results: list[str] = []

        def read() -> None:
            results.append(client.list_resource("carriers").data[0]["carrier_id"])

        threads = [threading.Thread(target=read) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ["k1"] * 5


def test_a_configuration_error_leaves_no_thread_behind():
    before = threading.active_count()
    with pytest.raises(ClientConfigError, match="must end with the version prefix /v1"):
        BlockingMarketingClient("https://api.example.com", "abcd1234.secret")
    assert threading.active_count() == before
