"""The HTTP client base and its parts: auth as ``httpx.Auth``, secrets hidden while a client
lives, ``Throttled`` answers through the one retry policy, and the policy's blocking loop."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import time
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from connectors.http.auth import BasicSecret, HeaderSecret, QuerySecrets
from connectors.http.client import HttpClient
from connectors.http.redact import _REDACT
from connectors.http.retry import RetryPolicy, Throttled, retrying


async def _no_wait(_: float) -> None:
    return None


FAST = RetryPolicy(max_attempts=2, sleep=_no_wait)


def signed(auth: httpx.Auth) -> httpx.Request:
    request = httpx.Request("GET", "https://api.example/v1/orders?page=2")
    return next(auth.auth_flow(request))


def test_each_auth_signs_the_request_and_shows_no_secret() -> None:
    secret = SecretStr("s3cr3t-value")
    bearer = signed(HeaderSecret("authorization", secret, scheme="Bearer"))
    assert bearer.headers["authorization"] == "Bearer s3cr3t-value"
    assert signed(HeaderSecret("x-token", secret)).headers["x-token"] == "s3cr3t-value"
    basic = signed(BasicSecret(SecretStr("key"), secret)).headers["authorization"]
    assert basic == httpx.BasicAuth("key", "s3cr3t-value")._auth_header
    assert signed(BasicSecret(SecretStr("key"))).headers["authorization"] == \
        httpx.BasicAuth("key", "")._auth_header
    query = signed(QuerySecrets({"ws_key": secret})).url.params
    assert (query["page"], query["ws_key"]) == ("2", "s3cr3t-value")
    for auth in (HeaderSecret("x", secret), BasicSecret(secret), QuerySecrets({"k": secret})):
        assert "s3cr3t" not in repr(auth)
        assert "s3cr3t-value" in auth.wire_forms()


def client(handler: Any, **options: Any) -> HttpClient:
    return HttpClient("https://api.example/v1", timeout=httpx.Timeout(5),
                      headers={"accept": "application/json"},
                      transport=httpx.MockTransport(handler), **options)


def test_secrets_are_hidden_until_the_client_is_closed_or_dropped() -> None:
    auth = HeaderSecret("x-token", SecretStr("hidden-while-open"))
    open_client = client(lambda request: httpx.Response(200, json={}), auth=auth)
    assert _REDACT.secrets["hidden-while-open"] == 1
    asyncio.run(open_client.aclose())
    assert _REDACT.secrets["hidden-while-open"] == 0
    client(lambda request: httpx.Response(200, json={}), auth=auth)  # never closed
    gc.collect()
    assert _REDACT.secrets["hidden-while-open"] == 0


def test_each_path_goes_to_its_address_on_the_base_url_however_many_paths_a_client_asks(
) -> None:
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(200, json={})

    web = client(answer)
    paths = ["orders", "/orders", *(f"orders/{n}" for n in range(300)), "orders"]

    async def run() -> None:
        for path in paths:
            await web.send("GET", path, params={"page": 2} if path == "/orders" else None)
        await web.aclose()

    asyncio.run(run())
    assert asked[:2] == ["https://api.example/v1/orders", "https://api.example/v1/orders?page=2"]
    assert asked[2:] == [f"https://api.example/v1/orders/{n}" for n in range(300)] + [
        "https://api.example/v1/orders"]


def test_throttled_answers_are_asked_again_without_spending_the_policys_attempts() -> None:
    answers = [httpx.Response(200, json={"throttled": True})] * 5 + [
        httpx.Response(503), httpx.Response(200, json={"throttled": False})]
    paced: list[int] = []

    def read(response: httpx.Response) -> Any:
        if response.status_code == 200 and response.json()["throttled"]:
            raise Throttled(response)
        return web._read("GET", "orders", response)

    async def pace() -> None:
        paced.append(len(paced))

    web = client(lambda request: answers.pop(0), retry=FAST)

    async def run() -> Any:
        try:
            return await web.send("GET", "orders", pace=pace, read=read)
        finally:
            await web.aclose()

    assert asyncio.run(run()) == {"throttled": False}
    assert len(paced) == web.requests == 7  # 5 throttled, then the policy's 2 attempts


class FailingAtFirst(httpx.AsyncBaseTransport):
    """Answers 503, then 200 once it has failed ``failures`` times."""

    def __init__(self, failures: int) -> None:
        self.failures, self.asked = failures, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.asked += 1
        if self.asked > self.failures:
            return httpx.Response(200, json={"ok": True})
        return httpx.Response(503)


class ShopError(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ShopClient(HttpClient):
    error = ShopError


def asked_until_answered(transport: FailingAtFirst, policy: RetryPolicy) -> Any:
    web = ShopClient("https://api.example/v1", timeout=httpx.Timeout(5), headers={},
                     transport=transport, retry=policy)

    async def run() -> Any:
        try:
            return await web.send("GET", "orders")
        finally:
            await web.aclose()

    return asyncio.run(run())


def test_a_request_that_fails_at_first_is_retried_under_the_policy() -> None:
    transport = FailingAtFirst(failures=2)
    policy = RetryPolicy(max_attempts=3, sleep=_no_wait)
    assert asked_until_answered(transport, policy) == {"ok": True}
    assert transport.asked == 3
    with pytest.raises(ShopError, match="still answered 503 after retries"):
        asked_until_answered(FailingAtFirst(failures=3), policy)


def test_the_policys_time_bound_counts_from_the_first_attempt() -> None:
    transport = FailingAtFirst(failures=1)
    policy = RetryPolicy(max_attempts=5, max_total=0.2, initial_backoff=0.001, jitter=0,
                         sleep=_no_wait,  # the first attempt began 0.3 s before it ended
                         clock=lambda: time.monotonic() - 0.3)
    with pytest.raises(ShopError, match="still answered 503 after retries"):
        asked_until_answered(transport, policy)
    assert transport.asked == 1


def test_the_blocking_loop_retries_what_it_is_told_under_the_policys_bounds() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    policy = RetryPolicy(max_attempts=3, initial_backoff=0.001, max_backoff=0.001, jitter=0)
    locked = lambda exc: "locked" in str(exc)  # noqa: E731
    for attempt in retrying(policy, locked):
        with attempt:
            result = flaky()
    assert (result, len(calls)) == ("done", 3)

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        for attempt in retrying(RetryPolicy(max_attempts=2, initial_backoff=0.001), locked):
            with attempt:
                raise sqlite3.OperationalError("database is locked")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        for attempt in retrying(policy, locked):
            with attempt:
                raise sqlite3.OperationalError("no such table: x")
