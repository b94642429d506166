"""The destination dies mid-sync: the stream stops reading the shop within the configured
stretch, ends with one message — since when, that nothing is lost, where the next run
resumes — and once the destination is back, a rerun leaves it equal to the source.

The destination is a sandbox in its own process, killed (SIGKILL) as soon as the first chunk
of orders is recorded as accepted, and restarted on the same ``--data`` file: it keeps what
it had accepted, as a real service does across an outage.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connectors.sources.woocommerce import WooCommerceConnector
from pipelines.engine.config import Config, ConfigError, parse_config
from pipelines.engine.mappings import mapping_for
from pipelines.engine.mappings.base import MappingContext
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.stopped import SyncStopped
from pipelines.engine.stream_report import StreamReport
from sandbox.marketing.settings import DEFAULT_KEY
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.support import (
    MovableClock,
    assert_stored_as_mapped,
    mapped_items,
    read_records,
    row_key,
)
from tests.support import RunningSandbox

#: seconds of nothing but failures after which the destination is taken as down (the
#: default is 60; the rule is the same, the test just need not wait that long)
DOWN_AFTER = 1.0
#: from the destination's death to the sync's stop: the stretch, plus the chunk being read
#: and mapped — far above what it takes, so only a sync that keeps going fails
BOUND = 30.0
ORDERS = 300
#: orders per chunk (and page)
CHUNK = 50


@pytest.fixture
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", str(ORDERS), "--customers", "20", "--products", "8",
                              "--seed", "7")
    yield running
    running.stop()


@pytest.fixture
def destination(start, tmp_path) -> Callable[[], RunningSandbox]:
    """Starts the destination (again) on the same data file, in a process of its own."""
    data = str(tmp_path / "destination.sqlite")
    return lambda: start("--data", data, "--visibility-delay", "0", own_process=True)


def config_for(destination: RunningSandbox, shop: RunningFakeShop,
               read_process: bool = False) -> Config:
    return parse_config({
        "destination": {"base_url": destination.base_url, "api_key_env": "T_API_KEY",
                        "down_after_seconds": DOWN_AFTER},
        "sources": [{"name": "woo", "platform": "woocommerce", "lookback_seconds": 0,
                     "connection": {"url": shop.root, "key_env": "T_WC_KEY",
                                    "secret_env": "T_WC_SECRET"},
                     "data_source": {"label": "outage test"},
                     "tuning": {"chunk_items": CHUNK, "page_size": CHUNK,
                                "read_process": read_process}}],
    })


def runner_for(config: Config, state: StateStore, shop: RunningFakeShop) -> SourceRunner:
    env = {"T_API_KEY": DEFAULT_KEY, "T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret}
    return SourceRunner(config, config.sources[0], state, env, MovableClock())


def expected(shop: RunningFakeShop, stream: str) -> dict[str, dict[str, dict[str, Any]]]:
    records = read_records(lambda: WooCommerceConnector(shop.root, shop.key, shop.secret), stream)
    return mapped_items(mapping_for("woocommerce"), stream, records,
                        MappingContext(shop.root, "en", "EUR", None))


@pytest.mark.parametrize("read_process", [False, True], ids=["in_process", "read_process"])
def test_a_destination_killed_mid_sync_stops_it_and_a_rerun_completes_the_destination(
    destination, shop, tmp_path, read_process
):
    first = destination()
    state = StateStore(f"sqlite:///{tmp_path / 'state.db'}")
    killed: list[float] = []

    def kill_after_the_first_orders(report: StreamReport) -> None:
        if report.stream == "orders" and report.total("accepted") and not killed:
            assert isinstance(first.process, subprocess.Popen)
            first.process.kill()
            first.process.wait()
            killed.append(time.monotonic())

    runner = runner_for(config_for(first, shop, read_process), state, shop)
    with pytest.raises(SyncStopped) as caught:
        asyncio.run(runner.run(progress=kill_after_the_first_orders))
    stopped_after = time.monotonic() - killed[0]

    stop = caught.value
    print(f"\ndestination killed -> sync stopped: {stopped_after:.2f} s"
          f" (down_after_seconds={DOWN_AFTER})")
    assert stopped_after < BOUND
    assert (stop.why, stop.stream) == ("destination down", "orders")
    cursor = state.get_cursor("woo", "orders")
    assert cursor is not None, "the chunk accepted before the death is recorded with its cursor"
    message = str(stop)
    assert message.startswith(f"destination down: {first.base_url} has answered no request"
                              " since ")
    assert "(network errors or 5xx for 1 s; last: ConnectError)" in message
    assert "nothing is lost" in message
    assert f"orders after {cursor.changed_at.isoformat()} #{cursor.record_id}" in message
    (orders_run,) = [r for r in state.recent_runs("woo") if r.resource == "orders"]
    assert orders_run.status == "failed"
    # the chunk delivered, the one pushed while it was recorded, the one whose push found
    # the destination dead, and the one checked meanwhile: the stream stopped reading there
    assert orders_run.counts["records"] <= 4 * CHUNK < ORDERS

    again = destination()  # back, with what it had accepted
    accepted = {e.key for e in state.entries("woo", "orders", {ItemStatus.ACCEPTED})}
    held = {row_key("orders", o) for o in again.client().get(
        "/orders", params={"limit": 1000}).json()["data"]}
    assert accepted and accepted <= held, "what the ledger holds as accepted survived"

    reports = asyncio.run(runner_for(config_for(again, shop, read_process), state, shop).run())

    assert sum(r.total("failed") for r in reports) == 0
    api = again.client()
    # the orders listing does not echo an order's customer and lines (it derives its own)
    for stream, resource, route, ignore in (
        ("orders", "orders", "/orders", ("customer", "products")),
        ("customers", "customers", "/customers", ()),
        ("products", "products", "/products", ()),
    ):
        stored = {row_key(resource, row): row
                  for row in api.get(route, params={"limit": 1000}).json()["data"]}
        assert_stored_as_mapped(stored, expected(shop, stream)[resource], resource, ignore)
    state.close()


def test_the_stretch_is_configured_and_checked():
    base = {"sources": [{"name": "s", "platform": "woocommerce",
                         "connection": {"url": "http://127.0.0.1:9", "key_env": "K",
                                        "secret_env": "S"}}]}
    assert parse_config(base).destination.down_after_seconds == 60
    with pytest.raises(ConfigError, match="down_after_seconds"):
        parse_config({**base, "destination": {"down_after_seconds": 0}})


def test_a_run_left_running_is_marked_interrupted_when_its_stream_runs_again(store):
    killed = store.start_run("woo", "orders", "sync")  # its process died: never finished
    other = store.start_run("woo", "customers", "sync")
    elsewhere = store.start_run("pos", "orders", "sync")

    store.start_run("woo", "orders", "sync")

    assert store.get_run(killed).status == "interrupted"
    assert "its process was killed or lost" in store.get_run(killed).error
    assert store.get_run(killed).finished_at is None, "when it died is not known"
    assert store.get_run(other).status == "running", "another stream's run is not touched"
    assert store.get_run(elsewhere).status == "running", "nor another source's"
    # two runs of one stream at once: the first, marked, says how it really ended
    store.finish_run(killed, "succeeded", {})
    assert store.get_run(killed).status == "succeeded"
