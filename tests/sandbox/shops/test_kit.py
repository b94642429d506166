"""The fake-shop kit every platform's fake is built on: the shared ``/__fake__`` routes answer
alike on all four HTTP fakes (each in its own wording), and the table, basket and persona
helpers do what the fakes rely on."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from sandbox.shops import basket
from sandbox.shops.launch import RunningFake
from sandbox.shops.magento import launch as magento
from sandbox.shops.people import BAD_EMAIL, Personas, ascii_part, odd_at, slugify
from sandbox.shops.prestashop import launch as prestashop
from sandbox.shops.shopify import launch as shopify
from sandbox.shops.table import Table
from sandbox.shops.woocommerce import launch as woocommerce


@dataclass(frozen=True)
class Fake:
    start: Callable[..., RunningFake]
    #: a time as the platform's /__fake__ takes it, and the field a bulk touch answers with it
    at: str
    stamp: str


FAKES = {
    "woocommerce": Fake(woocommerce.start_in_thread, "2025-07-01T12:00:00", "date_modified_gmt"),
    "magento": Fake(magento.start_in_thread, "2025-07-01 12:00:00", "updated_at"),
    "prestashop": Fake(prestashop.start_in_thread, "2025-07-01T12:00:00Z", "date_upd_utc"),
    "shopify": Fake(shopify.start_in_thread, "2025-07-01T12:00:00Z", "updatedAt"),
}


@pytest.fixture(params=list(FAKES))
def fake(request: pytest.FixtureRequest) -> Iterator[tuple[httpx.Client, Fake]]:
    spec = FAKES[request.param]
    shop = spec.start("--orders", "20", "--customers", "5", "--products", "5")
    yield shop.fake(), spec
    shop.stop()


def test_the_shared_routes_answer_alike_on_every_fake(fake: tuple[httpx.Client, Fake]) -> None:
    client, spec = fake
    frozen = client.post("/clock", json={"now": spec.at})
    assert frozen.status_code == 200 and frozen.json()["frozen"] is True
    advanced = client.post("/clock", json={"advance": 5}).json()
    assert advanced["now"] != frozen.json()["now"]
    assert client.get("/clock").json()["now"] == advanced["now"]

    ids = client.get("/orders/ids").json()["ids"]
    assert len(ids) == 20
    touched = client.post("/orders/touch", json={"ids": ids[:2], "at": spec.at}).json()
    assert touched["touched"] == ids[:2] and touched[spec.stamp].startswith("2025-07-01")
    assert client.post(f"/orders/{ids[0]}/touch").status_code == 200
    assert client.put(f"/orders/{ids[0]}", json={}).status_code == 200
    assert client.post("/customers", json={}).status_code == 201
    assert client.delete(f"/orders/{ids[-1]}").status_code == 200
    assert client.delete("/orders/999999999").status_code == 404

    assert client.get("/nothing/ids").status_code == 404
    assert client.put(f"/orders/{ids[0]}", json=[1]).status_code == 400
    assert client.post("/clock", json={"now": "not a time"}).status_code == 400
    assert client.get("/stats").status_code == 200


def test_a_patch_keeps_what_it_leaves_out_of_an_object() -> None:
    @dataclass
    class Row:
        id: int
        at: int = 0

    table = Table("things", [Row(2, 5), Row(1, 9)], sort_keys={"at": lambda r: r.at})
    assert list(table.rows) == [1, 2]
    assert [r.id for r in table.ordered("at")] == [2, 1] and table.keys("at") == [5, 9]
    table.save(1, {"billing": {"phone": "1"}, "note": "a"})
    table.save(1, {"billing": {"city": "Lyon"}})
    built = table.patched(1, {"billing": {"phone": "0", "email": "e"}, "note": "", "id": 1})
    assert built == {"billing": {"phone": "1", "email": "e", "city": "Lyon"}, "note": "a", "id": 1}
    table.rows[3] = Row(3, 1)
    assert table.keys("at") == [5, 9]  # a view is kept until the table says it changed
    table.changed()
    assert table.keys("at") == [1, 5, 9]
    with pytest.raises(KeyError):
        table.row(7)


def test_a_discount_is_taken_off_the_lines_in_order_never_off_a_negative_one() -> None:
    assert basket.spread(700, [-500, 400, 600]) == [0, 400, 300]
    assert basket.coupon_off(3000, True, 1500) == 450
    assert basket.coupon_off(300, False, 500) == 300
    assert basket.shipping(4999, True) == 490 and basket.shipping(5000, True) == 0
    assert basket.shipping(0, False) == 0
    assert basket.pick(random.Random(1), [], 3) == []
    assert basket.money(-505) == "-5.05" and basket.money(7) == "0.07"


def test_personas_are_the_same_for_a_seed_and_odd_at_fixed_ids() -> None:
    personas = Personas("test", ("Zoë",), ("Müller",), odd_at(10, [("Bad", "Email"), ("Ana", "Li")]))
    assert personas.customer(0, 10) == ("Bad", "Email", BAD_EMAIL)
    assert personas.customer(0, 11) == ("Ana", "Li", "customer11@example.org")
    first, last, email = personas.customer(3, 12)
    assert (first, last) == ("Zoë", "Müller") and email.startswith("zoe.muller.12@")
    assert personas.customer(3, 12) == personas.customer(3, 12)
    assert personas.guest(random.Random(0), 7)[2] == "zoe.7@example.net"
    assert slugify("Café ☕ & Thé") == "cafe-the" and slugify("李") == "674e"
    assert slugify("李", "item") == "item" and ascii_part("小龙", "c") == "c"
