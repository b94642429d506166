"""Reconciliation against sandboxes that drop writes or show them late."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest

from pipelines.engine.config import parse_config
from pipelines.engine.plan import SETTLE
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.engine.support import MovableClock

SOURCE = "woo"


@pytest.fixture(scope="module")
def shop():
    running = start_in_thread("--orders", "300", "--customers", "40", "--products", "10")
    yield running
    running.stop()


def runner_for(sandbox, shop, tmp_path):
    config = parse_config({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "R_API_KEY"},
        "sources": [{
            "name": SOURCE, "platform": "woocommerce",
            "connection": {"url": shop.root, "key_env": "R_WC_KEY", "secret_env": "R_WC_SECRET"},
            "lookback_seconds": 0,
        }],
    })
    env = {"R_API_KEY": "sandbox1.shopsync-local-key", "R_WC_KEY": shop.key,
           "R_WC_SECRET": shop.secret}
    return SourceRunner(config, config.sources[0], StateStore(f"sqlite:///{tmp_path}/s.db"), env,
                        MovableClock())


def stored(sandbox, resource):
    stats = httpx.get(sandbox.root + "/_sandbox/stats",
                      headers={"spm-api-key": "sandbox1.shopsync-local-key"}).json()["data"]
    return stats


def test_dropped_writes_are_found_and_sent_again_until_the_sandbox_equals_the_source(
    start, shop, tmp_path
):
    sandbox = start("--drop-rate", "0.05", "--seed", "4", "--visibility-delay", "0")
    runner = runner_for(sandbox, shop, tmp_path)
    asyncio.run(runner.run())
    accepted = {r: c.get("accepted", 0) for r, c in runner.state.counts(SOURCE).items()}
    dropped = sum(c.get("dropped", 0) for c in stored(sandbox, None)["writes"].values())
    assert dropped > 0

    cycles, resent = 0, 0
    while runner.state.counts(SOURCE).get("orders", {}).get("accepted") or any(
        c.get("accepted") for c in runner.state.counts(SOURCE).values()
    ):
        cycles += 1
        assert cycles <= 6, runner.state.counts(SOURCE)
        report = asyncio.run(runner.reconcile(deadline_seconds=0, max_resends=5))
        resent += sum(c.resent for c in report.resources.values())

    counts = runner.state.counts(SOURCE)
    assert all(set(c) <= {"visible", "quarantined"} for c in counts.values()), counts
    assert resent >= dropped
    stats = stored(sandbox, None)["stored"]
    for resource, c in counts.items():
        assert stats[resource] == c.get("visible", 0), resource
    assert sum(accepted.values()) == sum(c.get("visible", 0) for c in counts.values())


def test_nothing_is_sent_again_before_its_deadline(start, shop, tmp_path):
    # the sandbox shows writes a minute after it accepts them, the deadline is half a minute:
    # the test moves the sandbox's clock and the runner's a minute on together
    sandbox = start("--visibility-delay", "60", "--manual-clock")
    runner = runner_for(sandbox, shop, tmp_path)
    asyncio.run(runner.run(streams=["statuses", "categories"]))

    early = asyncio.run(runner.reconcile(deadline_seconds=30))
    assert sum(c.resent for c in early.resources.values()) == 0
    assert sum(c.waiting for c in early.resources.values()) == 21
    sandbox.advance_clock(60)
    runner.clock.advance(timedelta(seconds=60))
    late = asyncio.run(runner.reconcile(deadline_seconds=30))

    assert sum(c.resent for c in late.resources.values()) == 0  # past the deadline, but shown
    assert sum(c.visible for c in late.resources.values()) == 21
    assert late.resources["statuses"].lag()["max"] >= 60


def test_items_that_never_show_are_parked_after_the_allowed_resends(start, shop, tmp_path):
    sandbox = start("--drop-rate", "1", "--visibility-delay", "0")
    runner = runner_for(sandbox, shop, tmp_path)
    asyncio.run(runner.run(streams=["statuses"]))

    reports = [asyncio.run(runner.reconcile(deadline_seconds=0, max_resends=2)) for _ in range(3)]

    assert [r.resources["statuses"].resent for r in reports] == [8, 8, 0]
    assert reports[-1].resources["statuses"].parked == 8
    assert runner.state.counts(SOURCE)["statuses"] == {ItemStatus.PARKED.value: 8}


def test_source_deletes_reach_the_destination_and_a_second_pass_changes_nothing(
    start, tmp_path
):
    shop = start_in_thread("--orders", "5", "--customers", "8", "--products", "3")
    try:
        sandbox = start("--visibility-delay", "0")
        runner = runner_for(sandbox, shop, tmp_path)
        asyncio.run(runner.run(streams=["customers"]))
        fake = shop.fake()
        ids = fake.get("/customers/ids", params={"exclude_status": "administrator"}).json()["ids"]
        fake.delete(f"/customers/{ids[-1]}", params={"force": "true"})

        (report,) = asyncio.run(runner.run(streams=["customers"]))
        (again,) = asyncio.run(runner.run(streams=["customers"]))

        assert report.counts["customers"]["deleted"] == 1
        assert report.counts["addresses"]["deleted"] == 2  # billing and shipping
        assert "deleted" not in again.counts.get("customers", {})
        stats = stored(sandbox, None)
        assert stats["stored"]["customers"] == 6  # 8, one quarantined, one deleted
        assert stats["stored"]["addresses"] == 14
        assert runner.state.counts(SOURCE)["customers"]["deleted"] == 1
    finally:
        shop.stop()


def test_completeness_names_every_gap_between_the_source_and_what_is_visible(start, tmp_path):
    from pipelines.demo_specs import demo_spec
    from sandbox.shops.magento.launch import start_in_thread as start_magento

    shop = start_magento()
    try:
        sandbox = start("--visibility-delay", "0")
        spec = demo_spec("magento")
        config = parse_config({
            "destination": {"base_url": sandbox.base_url, "api_key_env": "C_API_KEY"},
            "sources": [{"name": "mage", "platform": "magento", "lookback_seconds": 0,
                         "connection": spec.connection(shop.api_url)}],
        })
        env = {"C_API_KEY": "sandbox1.shopsync-local-key", **spec.env}
        runner = SourceRunner(config, config.sources[0],
                              StateStore(f"sqlite:///{tmp_path}/s.db"), env)
        asyncio.run(runner.run(streams=["orders"]))

        before = {r.stream: r for r in asyncio.run(runner.completeness())}
        asyncio.run(runner.reconcile(deadline_seconds=60))
        after = {r.stream: r for r in asyncio.run(runner.completeness())}

        orders = after["orders"]
        assert orders.at_source == orders.extracted > 0
        assert orders.visible == orders.final
        assert any("not in a final state" in gap for gap in before["orders"].gaps)
        assert not any("not in a final state" in gap for gap in orders.gaps)
        assert after["customers"].extracted == 0
        assert any("never extracted" in gap for gap in after["customers"].gaps)
    finally:
        shop.stop()


def test_completeness_in_a_window_of_change_time_names_a_record_not_synced_yet(
    start, tmp_path
):
    from datetime import UTC, datetime

    from pipelines.engine.plan import Window

    shop = start_in_thread("--orders", "30", "--customers", "5", "--products", "3")
    try:
        sandbox = start("--visibility-delay", "0")
        runner = runner_for(sandbox, shop, tmp_path)
        asyncio.run(runner.run(streams=["orders"]))
        asyncio.run(runner.reconcile(deadline_seconds=60))
        everything = Window(datetime(2000, 1, 1, tzinfo=UTC), datetime.now(UTC))

        (synced,) = [r for r in asyncio.run(runner.completeness(everything))
                     if r.stream == "orders"]
        shop.fake().post("/orders", json={})  # changed at the source, not synced yet
        runner.clock.advance(SETTLE)  # the recent window ends at a settled second
        (recent,) = [r for r in asyncio.run(runner.completeness(runner.recent_window()))
                     if r.stream == "orders"]

        assert synced.at_source == synced.extracted > 0
        assert synced.final == synced.visible + len(
            runner.state.entries(SOURCE, "orders", {ItemStatus.QUARANTINED}))
        assert recent.at_source == recent.extracted + 1
        assert recent.gaps[0].startswith("1 orders records at the source were never extracted")
    finally:
        shop.stop()


def test_an_order_billed_to_another_email_than_its_customers_is_confirmed_not_resent(
    start, shop, tmp_path
):
    # the order listing shows the customer record's email, not the order's billing email:
    # only what it echoes of the order itself is compared
    sandbox = start("--visibility-delay", "0")
    runner = runner_for(sandbox, shop, tmp_path)
    from connectors.sources.woocommerce import WooCommerceConnector
    from tests.engine.support import read_records

    orders = read_records(lambda: WooCommerceConnector(shop.root, shop.key, shop.secret),
                          "orders")
    order = next(o for o in orders if o["customer_id"] and o["status"] != "trash")
    shop.fake().put(f"/orders/{order['id']}",
                    json={"billing": {"email": "billing.desk@example.org"}})
    runner.clock.advance(SETTLE)
    asyncio.run(runner.run(streams=["customers", "orders"]))

    reports = [asyncio.run(runner.reconcile(deadline_seconds=0, max_resends=1))
               for _ in range(2)]

    assert [r.resources["orders"].resent for r in reports] == [0, 0]
    entry = runner.state.ledger(SOURCE, "orders", [str(order["id"])])[str(order["id"])]
    assert entry.status == ItemStatus.VISIBLE


def test_a_read_back_failing_after_its_retries_is_kept_for_the_next_run_the_rest_checked(
    start, shop, tmp_path
):
    from connectors.http.retry import RetryPolicy
    from connectors.marketing.client import MarketingClient
    from pipelines.engine.reconcile import Reconciler

    data = str(tmp_path / "sandbox.sqlite")
    healthy = start("--data", data, "--visibility-delay", "0")
    runner = runner_for(healthy, shop, tmp_path)
    asyncio.run(runner.run(streams=["orders", "statuses", "categories"]))
    resources = runner.state.counts(SOURCE)
    accepted = sum(c.get("accepted", 0) for c in resources.values())
    data_source = next(d["id_data_source"] for d in healthy.client().get("/data-sources").json()
                       ["data"] if d["label"] == "shopsync")
    healthy.stop()

    def reconcile_on(sandbox):
        async def run():
            # no retries: each failed answer is a read that exhausted its retries
            async with MarketingClient(sandbox.base_url, "sandbox1.shopsync-local-key",
                                       retry=RetryPolicy.none()) as client:
                return await Reconciler(source=SOURCE, state=runner.state, client=client,
                                        id_data_source=data_source, deadline=timedelta(0),
                                        clock=runner.clock).run(list(resources))
        return asyncio.run(run())

    flaky = reconcile_on(start("--data", data, "--fault-rate", "0.5", "--seed", "2",
                               "--retry-after", "0"))
    left = sum(c.get("accepted", 0) for c in runner.state.counts(SOURCE).values())
    calm = reconcile_on(start("--data", data))

    first = flaky.totals()
    assert first["unchecked"] > 0 and first["visible"] > 0, flaky.as_dict()
    assert first["visible"] + first["unchecked"] == accepted
    assert (first["resent"], first["parked"]) == (0, 0)  # what was not read is not re-sent
    assert left == first["unchecked"]  # kept as accepted for the next run
    (line, *_) = flaky.not_checked()
    assert "could not be read back (kept for the next run)" in line
    assert any(code in line for code in ("429", "500", "502", "503"))
    assert calm.totals()["visible"] == first["unchecked"]
    assert calm.not_checked() == []
    assert all(set(c) <= {"visible", "quarantined"} for c in runner.state.counts(SOURCE).values())
