"""Typed errors, configuration checks, retries and key secrecy of the Marketing API client.

Retry tests run on sandboxes of their own with seeded faults. With ``--fault-rate 1`` every
request faults and ``random.Random(seed)`` picks the status from (429, 500, 502, 503):
seed 2 answers 429 then 502, seed 3 answers 500 first.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from connectors.http.retry import RetryPolicy
from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import (
    AuthenticationError,
    ClientConfigError,
    MarketingApiError,
    NotFoundError,
    RequestRejected,
    TransientError,
)
from connectors.marketing.query import Query
from connectors.marketing.samples import sample_item
from tests.support import new_key, new_kpi_key

pytestmark = pytest.mark.anyio
#: initial_backoff stays 1 (waits are capped by max_backoff): any other value makes
#: connectors/http/retry.py pass tenacity's deprecated ``initial`` (an error under pytest)
FAST = RetryPolicy(max_attempts=3, initial_backoff=1, max_backoff=0.05, jitter=0.01)
GENERAL_PATTERN = r"^[a-zA-Z0-9]{8}\.[A-Za-z0-9_-]+$"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(sandbox) -> AsyncIterator[MarketingClient]:
    async with MarketingClient(sandbox.base_url, new_key(), retry=FAST) as client:
        yield client


# --- answers of the API as typed errors -------------------------------------------------------


async def test_an_unknown_order_is_not_found(client):
    with pytest.raises(NotFoundError) as caught:
        await client.get_order("nope")
    assert caught.value.status_code == 404
    assert caught.value.message == "Order with order_id 'nope' not found"
    assert str(caught.value) == "GET /v1/orders/id/nope: 404 Order with order_id 'nope' not found"


async def test_a_bad_filter_is_rejected_with_the_apis_message(client):
    with pytest.raises(RequestRejected) as caught:
        await client.list_orders(Query().where("nope", "EQUALS", 1).where("amonut", "LESS_THAN", 3))
    error = caught.value
    assert error.status_code == 400
    assert error.errors[0].startswith(
        "filters[0]: unknown field 'nope'; allowed fields: id, order_id"
    )
    assert error.errors[1].startswith("filters[1]: unknown field 'amonut' (did you mean 'amount'?)")
    assert client.stats.attempts == 1  # a 400 is never retried


async def test_an_unknown_key_is_an_authentication_error(start):
    closed = start()  # no --accept-any-key: only the documented key opens a shop
    key = new_key()
    async with MarketingClient(closed.base_url, key, retry=FAST) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.list_contacts()
    assert caught.value.status_code == 401
    assert caught.value.message == "Invalid API key: no shop has this key"
    assert key not in str(caught.value) and key not in repr(caught.value)
    assert client.stats.attempts == 1


# --- refused before sending -------------------------------------------------------------------


@pytest.mark.parametrize("key", ["not-a-key", "abc.def", "abcdefgh.with space", ""])
async def test_a_malformed_key_is_refused_before_anything_is_sent(sandbox, key):
    async with MarketingClient(sandbox.base_url, key) as client:
        with pytest.raises(ClientConfigError) as caught:
            await client.list_data_sources()
    assert f"the API key is malformed: it must match {GENERAL_PATTERN}" in str(caught.value) or (
        key == "" and "must match" in str(caught.value)
    )
    assert key == "" or key not in str(caught.value)
    assert (client.stats.requests, client.stats.attempts) == (0, 0)


async def test_a_kpi_method_needs_the_kpi_key(sandbox):
    async with MarketingClient(sandbox.base_url, new_key()) as client:
        with pytest.raises(ClientConfigError, match=r"the custom KPI key is not set; it must match "
                                                    r"\^\[a-zA-Z0-9-\]\{20,64\}\$"):
            await client.list_custom_kpis()
        assert client.stats.attempts == 0


async def test_the_general_key_is_not_used_on_kpi_routes_nor_the_kpi_key_elsewhere(sandbox):
    async with MarketingClient(sandbox.base_url, kpi_api_key=new_kpi_key(), retry=FAST) as client:
        assert await client.list_custom_kpis() == []
        with pytest.raises(ClientConfigError, match="the API key is not set"):
            await client.list_orders()


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        pytest.param("http://api.example.com/v1",
                     "must use https: the API key travels with every request", id="http-remote"),
        pytest.param("https://api.example.com", "must end with the version prefix /v1",
                     id="no-v1"),
        pytest.param("https://api.example.com/v2", "must end with the version prefix /v1",
                     id="v2"),
        pytest.param("ftp://api.example.com/v1", "must be an http(s) URL", id="ftp"),
    ],
)
def test_base_url_rules(base_url, message):
    with pytest.raises(ClientConfigError) as caught:
        MarketingClient(base_url, "abcd1234.secret")
    assert message in str(caught.value)


@pytest.mark.parametrize("base_url", ["http://localhost:1/v1", "http://127.0.0.1:1/v1/",
                                      "http://[::1]:1/v1", "https://api.example.com/v1"])
async def test_https_or_loopback_base_urls_are_accepted(base_url):
    async with MarketingClient(base_url, "abcd1234.secret") as client:
        assert client.transport.base_url == base_url.rstrip("/")


def test_an_unknown_query_encoding_is_refused():
    with pytest.raises(ClientConfigError, match="query_encoding must be one of brackets, json"):
        MarketingClient(
            "https://api.example.com/v1", "abcd1234.secret",
            query_encoding="form",  # type: ignore[arg-type]
        )


async def test_redirects_are_not_followed():
    """No real server redirects, so a mock answers 302 towards another origin."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"location": "https://elsewhere.example.net/v1/orders"})

    key = "abcd1234.never-leaves"
    async with MarketingClient("https://api.example.com/v1", key, retry=FAST,
                               transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(MarketingApiError) as caught:
            await client.list_orders()
    assert caught.value.status_code == 302
    assert "redirect, which is not followed" in str(caught.value)
    assert [r.url.host for r in seen] == ["api.example.com"]
    assert seen[0].headers["spm-api-key"] == key


# --- retries ----------------------------------------------------------------------------------


async def test_half_the_requests_faulting_every_call_still_succeeds(start, caplog):
    """Also the secrecy check: a run with faults, retries and failures, logged at DEBUG."""
    faulty = start("--accept-any-key", "--visibility-delay", "0", "--fault-rate", "0.5",
                   "--seed", "3", "--retry-after", "0")
    key, kpi_key = new_key(), new_kpi_key()
    patient = RetryPolicy(max_attempts=12, initial_backoff=1, max_backoff=0.02, jitter=0.01)
    caplog.set_level(logging.DEBUG)
    errors: list[BaseException] = []
    async with MarketingClient(faulty.base_url, key, kpi_api_key=kpi_key, retry=patient) as client:
        await client.bulk_save("customers", [
            sample_item("customers", customer_id=f"c{i}", email=f"c{i}@example.com")
            for i in range(12)
        ])
        for _ in range(3):
            assert len((await client.list_resource("customers")).data) == 10
            assert (await client.list_contacts(Query().page(5))).meta.pagination.total_items == 12
            assert (await client.get_customer("c3"))["email"] == "c3@example.com"
            assert [s.label for s in (await client.list_data_sources()).data] == ["Default"]
            assert await client.list_custom_kpis() == []
        records = [r async for r in client.iter_records(client.list_contacts, page_size=4)]
        assert len(records) == 12
        bad_filter = Query().where("x", "EQUALS", 1)
        for failing in (client.get_order("nope"), client.list_orders(bad_filter)):
            with pytest.raises(MarketingApiError) as caught:
                await failing
            errors.append(caught.value)
        text = repr(client) + repr(client.transport)
    assert client.stats.attempts > client.stats.requests >= 20  # faults happened and were retried
    assert client.stats.throttled and client.stats.server_errors
    assert "retrying after" in caplog.text
    # what httpx and httpcore log at DEBUG is in the captured text too
    assert "HTTP Request: GET" in caplog.text and "send_request_headers" in caplog.text
    for secret in (key, kpi_key):
        assert secret not in caplog.text
        assert secret not in text
        assert all(secret not in str(e) and secret not in repr(e) for e in errors)


async def test_retry_after_is_honoured_then_the_last_error_is_raised(start):
    faulty = start("--accept-any-key", "--fault-rate", "1", "--retry-after", "1", "--seed", "2")
    waits: list[float] = []

    async def wait(seconds: float) -> None:  # the retry's waits, recorded instead of slept
        waits.append(seconds)

    retry = RetryPolicy(max_attempts=2, initial_backoff=1, max_backoff=0.01, jitter=0, sleep=wait)
    async with MarketingClient(faulty.base_url, new_key(), retry=retry) as client:
        with pytest.raises(TransientError) as caught:
            await client.list_orders()
    assert waits == [1.0]  # the 429's Retry-After: 1, not the 0.01 s backoff
    assert caught.value.status_code in (429, 500, 502, 503)
    assert (client.stats.attempts, client.stats.throttled) == (2, 1)


async def test_a_non_idempotent_create_is_not_retried_after_a_server_error(start):
    faulty = start("--accept-any-key", "--fault-rate", "1", "--retry-after", "0", "--seed", "3")
    async with MarketingClient(faulty.base_url, new_key(), retry=FAST) as client:
        with pytest.raises(TransientError) as caught:
            await client.create_event("Shipped", "Shipped")  # first answer: 500
    assert caught.value.status_code == 500
    assert client.stats.attempts == 1


async def test_a_non_idempotent_create_is_retried_after_a_429(start):
    faulty = start("--accept-any-key", "--fault-rate", "1", "--retry-after", "0", "--seed", "2")
    async with MarketingClient(faulty.base_url, new_key(), retry=FAST) as client:
        with pytest.raises(TransientError) as caught:
            await client.create_event("Shipped", "Shipped")  # 429 (retried), then 502 (not)
    assert caught.value.status_code == 502
    assert (client.stats.attempts, client.stats.throttled, client.stats.server_errors) == (2, 1, 1)


async def test_a_dropped_connection_is_a_network_error_retried_only_when_idempotent(start):
    """A drop may come after the server acted, so a non-idempotent create is not resent."""
    faulty = start("--accept-any-key", "--disconnect-rate", "1", "--seed", "1")
    async with MarketingClient(faulty.base_url, new_key(), retry=FAST) as client:
        with pytest.raises(TransientError, match="network error after retries: RemoteProtocolError"):
            await client.list_orders()
        assert (client.stats.attempts, client.stats.network_errors) == (3, 3)
        with pytest.raises(TransientError, match="RemoteProtocolError"):
            await client.create_event("Shipped", "Shipped")
        assert (client.stats.attempts, client.stats.network_errors) == (4, 4)
