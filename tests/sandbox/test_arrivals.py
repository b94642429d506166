"""``GET /_sandbox/arrivals``: when a key's latest API requests reached its shop, what the
end-to-end test of a destination key's shared budget (``tests/engine/test_budgets_destination.py``)
checks the spacing of. Each shop tells its own, never the key."""

from __future__ import annotations

import time

import httpx

from sandbox.marketing.limits import ARRIVALS_KEPT
from sandbox.marketing.settings import SandboxSettings
from sandbox.marketing.store import Store
from tests.support import RunningSandbox, new_key


def arrivals(sandbox: RunningSandbox, key: str) -> httpx.Response:
    return httpx.get(sandbox.root + "/_sandbox/arrivals", headers={"spm-api-key": key})


def test_a_shop_tells_when_its_api_requests_arrived_and_no_other_shops(sandbox):
    key, other = new_key(), new_key()
    before = time.time()
    api = sandbox.client(key)
    for _ in range(3):
        assert api.get("/data-sources").status_code == 200
    sandbox.client(other).get("/data-sources")
    after = time.time()

    answer = arrivals(sandbox, key)

    assert answer.status_code == 200
    at = answer.json()["data"]["at"]
    assert len(at) == 3, "three API requests; the control routes are not counted"
    assert at == sorted(at)
    assert before - 0.01 <= at[0] and at[-1] <= after + 0.01
    assert key not in answer.text
    assert len(arrivals(sandbox, other).json()["data"]["at"]) == 1
    assert arrivals(sandbox, new_key()).json()["data"]["at"] == []


def test_a_request_refused_for_its_key_is_no_shops_arrival(sandbox):
    assert arrivals(sandbox, "not a key").status_code == 401
    assert httpx.get(sandbox.base_url + "/data-sources",
                     headers={"spm-api-key": "not a key"}).status_code == 401


def test_only_the_latest_arrivals_are_kept():
    shop = Store(SandboxSettings(accept_any_key=True)).shop_for(new_key(), kpi=False)
    assert shop is not None
    assert shop.arrivals.maxlen == ARRIVALS_KEPT


def test_the_route_is_a_control_route_of_the_sandbox(sandbox):
    described = httpx.get(sandbox.root + "/openapi.json").json()["paths"]
    assert described["/_sandbox/arrivals"]["get"]["tags"] == ["sandbox"]
