"""Keys: the spm-api-key header on every request, two key patterns, one shop per key."""

from __future__ import annotations

import pytest

from connectors.marketing.samples import sample_item
from sandbox.marketing.settings import DEFAULT_KEY, DEFAULT_KPI_KEY


def test_a_request_without_a_key_is_401_with_a_json_body(sandbox):
    answer = sandbox.client(key=None).get("/orders")
    assert answer.status_code == 401
    assert answer.json() == {
        "statusCode": 401,
        "success": False,
        "message": "Missing spm-api-key header: every request must carry an API key",
        "errors": ["Missing spm-api-key header: every request must carry an API key"],
    }


@pytest.mark.parametrize(
    "key", ["short.secret", "abcdefgh-secret", "abcdefgh.", "abcdefgh.with space"],
)
def test_a_malformed_key_is_401_naming_the_expected_pattern(sandbox, key):
    answer = sandbox.client(key=key).get("/orders")
    assert answer.status_code == 401
    assert "^[a-zA-Z0-9]{8}\\.[A-Za-z0-9_-]+$" in answer.json()["message"]


def test_the_kpi_endpoints_have_their_own_key_pattern(sandbox, fresh_key):
    answer = sandbox.client(key=fresh_key()).get("/custom-stats/kpis")
    assert answer.status_code == 401
    assert "^[a-zA-Z0-9-]{20,64}$" in answer.json()["message"]


def test_the_default_sandbox_serves_the_documented_keys_only(start):
    running = start()
    assert running.client(DEFAULT_KEY).get("/orders").status_code == 200
    assert running.client(key=DEFAULT_KPI_KEY).get("/custom-stats/kpis").status_code == 200
    unknown = running.client("abcd1234.someone-else").get("/orders")
    assert unknown.status_code == 401
    assert unknown.json()["message"] == "Invalid API key: no shop has this key"


def test_each_key_sees_only_its_own_shop(start):
    running = start("--key", "shopAAAA.one", "--key", "shopBBBB.two,kpi-key-of-shop-b-0001",
                    "--visibility-delay", "0")
    one, two = running.client("shopAAAA.one"), running.client("shopBBBB.two")

    one.post("/customers", json=[sample_item("customers")])

    assert len(one.get("/customers").json()["data"]) == 1
    assert two.get("/customers").json()["data"] == []
    assert two.get("/customers/c-1001").status_code == 404
    assert running.client("kpi-key-of-shop-b-0001").get("/custom-stats/kpis").status_code == 200


def test_the_key_never_appears_in_an_answer(start):
    running = start("--key", "shopAAAA.very-secret-value")
    answers = [
        running.client("shopAAAA.very-secret-value").get("/orders", params={"limit": -1}),
        running.client("shopAAAA.very-secret-valuX").get("/orders"),
    ]
    for answer in answers:
        assert "very-secret" not in answer.text


def test_a_bad_key_on_the_command_line_is_refused_with_the_pattern(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "sandbox", "--key", "not a key"],
        capture_output=True, check=False, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "--key: a shop key must match" in done.stderr
    assert "Traceback" not in done.stderr
