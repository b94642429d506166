"""Poison records served by an HTTP shop, the fake WooCommerce (products created and
patched through its ``/__fake__`` API, with any JSON its REST API can serve): the run
finishes within a bound, every record is accounted for, and a rerun sends nothing new. The
examples from issue 10 always run (``@example``).

Its last test prints how many rows the poison-row modules generated (this module sorts
last among them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipelines.engine.plan import SETTLE
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.poison_support import (
    EDGE_INTS,
    EDGE_TEXT,
    GENERATED,
    LONG_TEXT,
    Row,
    json_values,
    nested,
    rows,
    run_twice_and_account,
)
from tests.engine.support import EngineSetup, MakeSetup

# an HTTP shop: the fake WooCommerce ----------------------------------------------------

WOO_SOURCE = "woo"
#: the fields of a WooCommerce product (the REST API's names) a bad value may go to
WOO_FIELDS = ("name", "regular_price", "sale_price", "stock_quantity", "description",
              "short_description", "categories", "images", "permalink", "sku")


def woo_good(number: int, _identifier: int) -> dict[str, Any]:
    return {"name": f"Product {number}", "regular_price": "12.50", "stock_quantity": 3,
            "description": "A good product"}


@pytest.fixture
def woo() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "0", "--customers", "0", "--products", "0",
                              "--seed", "5")
    yield running
    running.stop()


@dataclass
class WooSetup(EngineSetup):
    shop: RunningFakeShop


#: what a shop's REST API can serve: JSON an encoder writes (64-bit integers, finite
#: floats, nesting a JSON encoder accepts), with the same edge texts and long cells
woo_value = st.one_of(
    st.sampled_from(EDGE_TEXT[:-2]), st.sampled_from(LONG_TEXT),
    st.sampled_from([v for v in EDGE_INTS if -(2**63) <= v < 2**63]),
    st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e300, -1e300, 5e-324, 1e20]),
    st.integers(min_value=1, max_value=200).map(lambda d: json.loads(nested(d).text)),
    json_values,
)
WOO_ISSUE_BAD: list[dict[str, Any]] = [
    {}, {"stock_quantity": "1e10000000"}, {"stock_quantity": 1e20}, {"stock_quantity": "²"},
    {"description": json.loads(nested(200).text)}, {"regular_price": "Infinity"},
    {"categories": "abc"}, {"sku": 12}, {}]
WOO_ISSUE_ROWS = [Row(f"<row-{n}>", {**woo_good(n, 0), **bad})
                  for n, bad in enumerate(WOO_ISSUE_BAD)]


@given(inputs=rows(values=woo_value, fields=WOO_FIELDS, good=woo_good))
@example(inputs=WOO_ISSUE_ROWS)
@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_shop_serving_poison_records_is_synced_record_by_record(
        engine_setup: MakeSetup, woo: RunningFakeShop, inputs: list[Row]) -> None:
    fake = woo.fake()
    origins: dict[str, str] = {}
    for row in inputs:
        # created good, then patched: the patch is served as it is, whatever it holds
        created = fake.post("/products", json={**woo_good(0, 0), "sku": row.tag})
        assert created.status_code == 201, created.text
        origins[row.tag] = str(created.json()["id"])
        patched = fake.put(f"/products/{origins[row.tag]}", content=orjson.dumps(row.values),
                           headers={"content-type": "application/json"})
        assert patched.status_code == 200, patched.text
    setup = engine_setup(WooSetup, {
        "name": WOO_SOURCE, "platform": "woocommerce", "lookback_seconds": 3600,
        "connection": {"url": woo.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET"},
    }, env={"T_WC_KEY": woo.key, "T_WC_SECRET": woo.secret}, shop=woo)
    setup.clock.advance(SETTLE)
    # each product is a key of its own, named by the shop: found by its id
    shop_rows = [Row(row.tag, {"id": origins[row.tag]}) for row in inputs]

    try:
        run_twice_and_account(setup, WOO_SOURCE, shop_rows, origins,
                              stored=lambda: {origins_by_id(origins).get(str(p["product_id"]), "")
                                              for p in setup.listed("/products")})
    finally:
        for product_id in origins.values():
            fake.delete(f"/products/{product_id}", params={"force": "true"})


def origins_by_id(origins: dict[str, str]) -> dict[str, str]:
    return {record_id: tag for tag, record_id in origins.items()}


def test_the_module_says_how_many_rows_it_generated() -> None:
    """Not a check: the count the lead quotes (``pytest -s`` prints it)."""
    print(f"\npoison rows: {GENERATED['rows']} generated rows went through the runs")
