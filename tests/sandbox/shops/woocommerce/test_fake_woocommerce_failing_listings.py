"""The fake WooCommerce shop's fault knob: ``POST /__fake__/{resource}/fail`` makes one
resource's listing answer a status (WordPress's own error for it) until ``DELETE`` clears it,
so that a sync's step for that resource fails while the others run — and, being a 401, fails
at once: the connector does not retry a refused key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from connectors.sources.base import SourceAuthError
from connectors.sources.woocommerce import WooCommerceConnector
from sandbox.shops.woocommerce.launch import RunningFakeShop
from sandbox.shops.woocommerce.launch import start_in_thread as start


@pytest.fixture
def shop() -> Iterator[RunningFakeShop]:
    """A small shop of its own: the tests change what it answers."""
    running = start("--orders", "20", "--customers", "5", "--products", "6")
    yield running
    running.stop()


def test_a_failing_listing_answers_wordpress_error_until_cleared(shop: RunningFakeShop) -> None:
    api, fake = shop.client(), shop.fake()
    one = api.get("/orders", params={"per_page": 1}).json()[0]["id"]

    assert fake.post("/orders/fail", json={"status": 401}).json() == {
        "resource": "orders", "failing": 401}
    refused = api.get("/orders")
    assert refused.status_code == 401
    assert refused.json() == {"code": "woocommerce_rest_cannot_view",
                              "message": "Sorry, you cannot list resources.",
                              "data": {"status": 401}}
    assert api.get("/orders", params={"page": 2}).status_code == 401  # every page, every time
    assert api.get(f"/orders/{one}").status_code == 200  # only the listing
    assert api.get("/products").status_code == 200  # only that resource

    assert fake.delete("/orders/fail").json() == {"resource": "orders", "failing": None}
    assert api.get("/orders").status_code == 200


def test_any_error_status_can_be_asked_for_and_nothing_else(shop: RunningFakeShop) -> None:
    api, fake = shop.client(), shop.fake()
    fake.post("/products/fail", json={"status": 500})
    broken = api.get("/products")
    assert (broken.status_code, broken.json()["code"]) == (500, "internal_server_error")

    for wrong in ({"status": 200}, {"status": "401"}, {}):
        answer = fake.post("/orders/fail", json=wrong)
        assert (answer.status_code, answer.json()["code"]) == (400, "fake_invalid_status")
    assert fake.post("/nothing/fail", json={"status": 401}).status_code == 404
    assert shop.client(auth=False).post(shop.root + "/__fake__/orders/fail",
                                        json={"status": 401}).status_code == 401
    assert api.get("/orders").status_code == 200


def test_a_failing_listing_fails_the_read_at_once_with_the_shops_message(
        shop: RunningFakeShop) -> None:
    shop.fake().post("/orders/fail", json={"status": 401})
    before = shop.fake().get("/stats").json()["requests"]

    async def read() -> None:
        async with WooCommerceConnector(shop.root, shop.key, shop.secret) as source:
            async for _ in source.read("orders"):
                pass

    with pytest.raises(SourceAuthError, match="cannot list resources"):
        asyncio.run(read())
    assert shop.fake().get("/stats").json()["requests"] == before + 1  # not retried
