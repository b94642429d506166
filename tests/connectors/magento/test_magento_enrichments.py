"""The Magento connector's enrichments, against the fake shop: cart items resolved to
product ids, configurable products with their children, and parents re-read when only a
child changed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from connectors.sources.base import Position
from connectors.sources.magento.connector import position_of
from sandbox.shops.magento.launch import RunningFakeMagento
from tests.connectors.magento.support import Start, ascending, keys, read

# enrichments --------------------------------------------------------------------------------

def test_cart_items_carry_the_id_of_the_product_their_sku_names(shop) -> None:
    by_sku = {p["sku"]: p["id"] for p in read(shop, "products", variations=False)}
    carts = read(shop, "carts", page_size=20)
    items = [i for c in carts for i in c["items"]]
    assert items and all(i["_product_id"] == by_sku[i["sku"]] for i in items)
    active = read(shop, "carts", active_carts_only=True)
    assert active and all(c["is_active"] for c in active)
    assert len(active) < len(carts)


def test_configurable_products_carry_their_children(shop) -> None:
    products = {p["sku"]: p for p in read(shop, "products")}
    tee = products["TEE Été"]
    assert [c["id"] for c in tee["_children"]] == (
        tee["extension_attributes"]["configurable_product_links"])
    assert all(p["_children"] == [] for p in products.values() if p["type_id"] != "configurable")
    assert "_children" not in read(shop, "products", variations=False)[0]


def requests_made(running: RunningFakeMagento) -> int:
    return int(running.fake().get("/stats").json()["requests"])


def test_a_changed_child_brings_its_unchanged_parent_back_with_fresh_children(
        start_shop: Start) -> None:
    running = start_shop("--products", "12", "--seed", "5")
    before = read(running, "products")
    last = position_of("products", before[-1])
    tee = next(p for p in before if p["sku"] == "TEE Été")
    child = tee["extension_attributes"]["configurable_product_links"][1]
    fake = running.fake()
    fake.put(f"/products/{child}", json={"price": 77.5})
    baseline = requests_made(running)

    changed = read(running, "products", after=last)

    # the products page, the child -> parent map, the parent's search, its children
    assert requests_made(running) - baseline == 4
    assert keys("products", changed) == [str(tee["id"]), str(child)]
    assert ascending("products", changed)
    parent, simple = changed
    assert position_of("products", parent).changed_at == position_of("products",
                                                                     simple).changed_at
    assert parent["updated_at"] == tee["updated_at"]  # the record as Magento has it
    assert {c["id"]: c["price"] for c in parent["_children"]}[child] == 77.5
    assert read(running, "products", after=position_of("products", changed[-1])) == []
    # a read from the start reads every parent at its own place: nothing re-read
    assert sorted(keys("products", read(running, "products")), key=int) == sorted(
        keys("products", before), key=int)
    # without variations there is nothing to refresh
    assert keys("products", read(running, "products", after=last, variations=False)) == [
        str(child)]


def test_a_parent_changed_itself_or_twice_through_its_children_is_read_once(
        start_shop: Start) -> None:
    running = start_shop("--products", "12", "--seed", "5")
    before = read(running, "products")
    last = position_of("products", before[-1])
    tee = next(p for p in before if p["sku"] == "TEE Été")
    first, second, third = tee["extension_attributes"]["configurable_product_links"][:3]
    fake = running.fake()
    fake.post("/clock", json={"now": "2026-03-01 09:00:00"})
    fake.post(f"/products/{first}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{second}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{tee['id']}/touch")
    fake.post("/clock", json={"advance": 1})
    fake.post(f"/products/{third}/touch")

    changed = read(running, "products", after=last, page_size=1)

    # read at its own place: its children were fresh then, no need to re-read it
    assert keys("products", changed) == [str(first), str(second), str(tee["id"]), str(third)]

    again = read(running, "products", after=position_of("products", changed[1]), page_size=1)
    # the parent comes back once for the two children changed before its own change
    assert keys("products", read(running, "products", after=last)) == keys("products", changed)
    assert keys("products", again) == [str(tee["id"]), str(third)]

    fake.post("/clock", json={"advance": 1})
    fake.put(f"/products/{first}", json={"name": "Renamed"})
    fake.post("/clock", json={"advance": 1})
    fake.put(f"/products/{second}", json={"name": "Renamed too"})
    refreshed = read(running, "products", after=position_of("products", changed[-1]),
                     page_size=1)
    assert keys("products", refreshed) == [str(tee["id"]), str(first), str(second)]
    assert ascending("products", refreshed)
    names = {c["id"]: c["name"] for c in refreshed[0]["_children"]}
    assert (names[first], names[second]) == ("Renamed", "Renamed too")


def test_a_re_read_parent_never_sorts_at_or_before_the_position_read_after(
        start_shop: Start) -> None:
    """The child ties ``after`` on its second with the parent's id below it: the parent
    moves just past ``after`` and waits until no record of that second is left to read,
    so the cursor never passes one."""
    running = start_shop("--products", "12", "--seed", "5")
    tee = next(p for p in read(running, "products") if p["sku"] == "TEE Été")
    child = tee["extension_attributes"]["configurable_product_links"][0]
    other = next(p["id"] for p in read(running, "products")
                 if p["type_id"] == "simple" and p["id"] > child and p["id"] not in
                 tee["extension_attributes"]["configurable_product_links"])
    fake = running.fake()
    fake.post("/products/touch", json={"ids": [child, other], "at": "2026-03-01 09:00:00"})
    after = Position(datetime(2026, 3, 1, 9, tzinfo=UTC), str(tee["id"]))

    changed = read(running, "products", after=after, page_size=1)

    assert keys("products", changed) == [str(child), str(other), str(tee["id"])]
    assert ascending("products", changed) and after < position_of("products", changed[0])
    assert read(running, "products", after=position_of("products", changed[-1])) == []
