"""The Dagster UI of ``shopsync dev``, in a real browser, used as a person would, one check a
test: the code location loads and lists its automation; the demo's sync, launched with the
job's own button, succeeds; the orders asset shows its counts, checks and the reasons items
were held back, and lineage follows the API's references; a reconciliation shows its report;
a backfill from the Launchpad labels itself; a run that fails marks only what failed; Ctrl-C
stops everything.

The tests share one ``shopsync dev`` and one browser and run in order (one xdist worker takes
the module): a later test reads the runs an earlier one launched (``Journey``). Screenshots of
each page, numbered in the order taken, go to ``build/ui-screenshots/test_dagster_ui/`` with
the output of ``shopsync dev``. ``python bench/ui.py`` measures the times."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from sandbox.shops.woocommerce.settings import DEFAULT_CONSUMER_KEY, DEFAULT_CONSUMER_SECRET
from tests.ui.dev import START_BOUND, STOP_BOUND, Dev
from tests.ui.journey import Journey, needs
from tests.ui.pages import CHROMIUM, DagsterUI

SOURCE = "demo_shop"
#: bounds far above what they take, so that a crowded machine waits and only a hang fails
RUN_BOUND = 600.0
LOAD_BOUND = 300.0

pytestmark = [
    # skipped on a machine without Chromium; never in CI, where .ci/run installs it
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason=f"no Chromium at {CHROMIUM}: install it with .ci/chromium.sh"
                              " (Debian's package)"),
    # one worker takes the whole module (--dist loadgroup): its tests share one shopsync dev
    pytest.mark.xdist_group("ui"),
    # a hang fails, whatever a test waits for: the start (the first test), a run, the stop
    pytest.mark.timeout(START_BOUND + LOAD_BOUND + RUN_BOUND + STOP_BOUND),
]

#: the orders asset's checks after the demo's first sync, as their list shows them: the
#: ledger's state (nothing_*) and what the run found (run_*)
ORDERS_CHECKS = {
    "nothing_parked": "Succeeded",
    "nothing_quarantined": "Failed",
    "nothing_rejected": "Succeeded",
    "run_quality": "Failed",
    "run_rejections": "Succeeded",
}
#: the fake shop's orders whose customer has a bad email: held back with this in the reason
BAD_EMAIL = "not-an-email"
#: the schedules and sensors, stopped here (``--no-automation``: no run but the tests' own);
#: that they run by default is tests/assets/test_definitions.py's
AUTOMATIONS = ("demo_shop_schedule", "demo_shop_reconcile_schedule", "shopsync_failed_runs",
               "shopsync_alerts")
#: who refers to whom, as the assets' Lineage sections show it (the API's references)
UPSTREAM = {
    "orders": {"carriers", "customers", "addresses", "products", "statuses", "vouchers"},
    "variations": {"products"},
    "images": {"products"},
    "addresses": {"customers"},
}
#: the sync's steps, named after what they materialize (the orders come last: they refer to
#: everything else); each ends with its assets' checks
ORDERS_STEP = f"{SOURCE}__carriers_orders"
BEFORE_ORDERS = {f"{SOURCE}__{step}" for step in (
    "categories", "customers_addresses", "statuses", "products_variations_images", "vouchers")}
#: a backfill window of the fake shop's history with orders in it and none held back
BACKFILL = ("2025-06-01", "2025-06-12")
BACKFILL_CONFIG = (f'resources:\n  sync_window:\n    config:\n      start: "{BACKFILL[0]}"\n'
                   f'      end: "{BACKFILL[1]}"\n')
BACKFILL_SAYS = f"backfill of changes {BACKFILL[0]} to {BACKFILL[1]} (cursor left alone)"
#: what the connector makes of the shop's 401 on a listing (a key without read access)
REFUSED = ("SourceAuthError: WooCommerce refused the credentials: Sorry, you cannot list"
           " resources. (woocommerce_rest_cannot_view)")


@pytest.fixture(scope="module")
def shop(dev: Dev) -> Iterator[httpx.Client]:
    """The ``/__fake__`` API of the demo's fake WooCommerce shop (where ``shopsync dev`` says
    it is), to make it fail as a real shop can."""
    with httpx.Client(base_url=f"{dev.shop_url}/__fake__", timeout=30,
                      auth=(DEFAULT_CONSUMER_KEY, DEFAULT_CONSUMER_SECRET)) as client:
        yield client


def test_the_code_location_loads_reloads_and_lists_its_automation_stopped_and_described(
        ui: DagsterUI) -> None:
    ui.wait_location_loaded(timeout=LOAD_BOUND)
    ui.shots.take(ui.page, "code-location")
    ui.reload_location(LOAD_BOUND)  # loaded again (bench/ui.py times it)

    automations = ui.automations(list(AUTOMATIONS))
    ui.shots.take(ui.page, "automation")
    assert {name: on for name, (on, _) in automations.items()} == dict.fromkeys(AUTOMATIONS, False)
    assert all(about and "No description" not in about for _, about in automations.values())
    assert "turned on when the location loads" in automations["demo_shop_schedule"][1]


def test_a_sync_launched_from_the_ui_succeeds_with_steps_named_after_what_they_materialize(
        ui: DagsterUI, journey: Journey) -> None:
    ui.wait_location_loaded(timeout=LOAD_BOUND)
    sync = ui.launch_job(f"{SOURCE}_sync")
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    journey.sync = sync
    ui.shots.take(ui.page, "sync-run")

    steps = ui.run_steps("Succeeded")
    ui.shots.take(ui.page, "sync-run-steps")
    assert set(steps) == BEFORE_ORDERS | {ORDERS_STEP}, steps
    assert "demo_shop__coupons" not in steps  # the stream's name: it materializes vouchers


def test_the_orders_page_shows_the_runs_counts_the_ledgers_states_and_the_reasons_held_back(
        ui: DagsterUI, journey: Journey) -> None:
    sync = needs(journey.sync, "the sync run", by="the sync test")
    orders = ui.open_asset(f"{SOURCE}/orders")
    latest = orders.latest_materialization()
    assert (latest.run_id, latest.icon) == (sync.run_id, "run_success")
    ui.shots.take(ui.page, "orders")
    journey.stored_cursor = orders.metadata("cursor (stored)")

    run = {name: int(orders.metadata(f"run: {name}"))
           for name in ("extracted", "accepted", "rejected", "quarantined")}
    assert run["accepted"] > 0 and run["quarantined"] > 0
    assert run["extracted"] == run["accepted"] + run["rejected"] + run["quarantined"]
    journey.orders_run = run
    ledger = orders.table("items by state (ledger)", "state")
    assert ledger["accepted"]["items"] == str(run["accepted"])  # not read back yet
    assert ledger["quarantined"]["items"] == str(run["quarantined"])
    reasons = orders.table("top reasons held back (ledger)", "reason")
    assert any(BAD_EMAIL in reason for reason in reasons), reasons


def test_the_orders_checks_tell_the_ledgers_state_apart_from_the_runs(
        ui: DagsterUI, journey: Journey) -> None:
    run = needs(journey.orders_run, "the orders' run counts", by="the orders page test")
    orders = ui.open_asset(f"{SOURCE}/orders")
    assert orders.open_checks() == ORDERS_CHECKS
    quarantined = orders.open_check("nothing_quarantined")
    assert f"{run['quarantined']} orders quarantined in the ledger" in quarantined
    assert BAD_EMAIL in quarantined  # its top reasons
    ui.shots.take(ui.page, "orders-check-quarantined")
    held = orders.open_check("run_quality")  # the run's rows held back, by any rule
    assert f"{run['quarantined']} of {run['extracted']} rows held back in this run" in held
    ui.shots.take(ui.page, "orders-check-quality")


def test_lineage_follows_the_apis_references(ui: DagsterUI) -> None:
    orders = ui.open_asset(f"{SOURCE}/orders")
    lineage = orders.lineage()
    assert {f"{SOURCE}/{name}" for name in UPSTREAM["orders"]} <= lineage["upstream"], lineage
    assert f"{SOURCE}/reconciliation" in lineage["downstream"]
    orders.lineage_graph(shows=sorted(UPSTREAM["orders"]))
    ui.shots.take(ui.page, "orders-lineage")
    for asset, upstream in UPSTREAM.items():
        if asset != "orders":
            shown = ui.open_asset(f"{SOURCE}/{asset}").lineage()["upstream"]
            assert {f"{SOURCE}/{name}" for name in upstream} <= shown, (asset, shown)
    ui.shots.take(ui.page, "addresses-lineage-section")


def test_a_reconciliation_launched_from_the_ui_shows_its_report(
        ui: DagsterUI, journey: Journey) -> None:
    run = needs(journey.orders_run, "the orders' run counts", by="the orders page test")
    reconcile = ui.launch_job(f"{SOURCE}_reconcile")
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    ui.shots.take(ui.page, "reconcile-run")

    report = ui.open_asset(f"{SOURCE}/reconciliation")
    assert report.latest_materialization().run_id == reconcile.run_id
    ui.shots.take(ui.page, "reconciliation")
    states = report.table("items by state (ledger)", "resource")
    assert states["orders"]["visible"] == str(run["accepted"])  # all read back
    assert states["orders"]["quarantined"] == str(run["quarantined"])
    assert all(row["accepted"] == "0" for row in states.values()), states
    text = report.metadata("report (Markdown)", shot="reconciliation-report")
    assert "Held back (top reasons)" in text and BAD_EMAIL in text
    checks = report.open_checks()  # the ledger of the whole source, as it ended
    assert (checks["nothing_quarantined"], checks["nothing_parked"]) == ("Failed", "Succeeded")
    ui.shots.take(ui.page, "reconciliation-checks")


def test_a_backfill_launched_from_the_launchpad_with_a_window_succeeds(
        ui: DagsterUI, journey: Journey) -> None:
    needs(journey.sync, "the sync run (the cursor a backfill leaves alone)", by="the sync test")
    backfill = ui.launch_from_launchpad(f"{SOURCE}_sync", BACKFILL_CONFIG)
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    journey.backfill = backfill
    ui.shots.take(ui.page, "backfill-run")


def test_the_orders_page_labels_the_backfill_keeps_the_stored_cursor_and_still_counts_held_back(
        ui: DagsterUI, journey: Journey) -> None:
    backfill = needs(journey.backfill, "the backfill run", by="the backfill test")
    stored = needs(journey.stored_cursor, "the orders' stored cursor", by="the orders page test")
    run = needs(journey.orders_run, "the orders' run counts", by="the orders page test")
    orders = ui.open_asset(f"{SOURCE}/orders")
    assert orders.latest_materialization().run_id == backfill.run_id
    assert orders.metadata("this run") == BACKFILL_SAYS
    assert orders.metadata("cursor (stored)") == stored
    assert orders.metadata("cursor (backfill reached)").startswith("2025-06-")
    assert int(orders.metadata("run: accepted")) > 0
    assert int(orders.metadata("run: quarantined")) == 0  # a clean window
    ui.shots.take(ui.page, "orders-after-backfill")

    checks = orders.open_checks()  # the run's check passes, the state's does not
    assert (checks["run_quality"], checks["nothing_quarantined"]) == ("Succeeded", "Failed")
    quarantined = orders.open_check("nothing_quarantined")
    assert f"{run['quarantined']} orders quarantined in the ledger" in quarantined
    ui.shots.take(ui.page, "orders-check-quarantined-after-backfill")


def test_a_sync_whose_orders_the_shop_refuses_fails_at_their_step_alone_with_the_shops_401(
        ui: DagsterUI, shop: httpx.Client, journey: Journey) -> None:
    # the last run of the module: the others read what the runs before it left
    assert shop.post("/orders/fail", json={"status": 401}).status_code == 200
    try:  # the shop refuses to list its orders for this run only
        failed = ui.launch_job(f"{SOURCE}_sync")
        assert ui.wait_run_finished(RUN_BOUND) == "Failure"
    finally:
        cleared = shop.delete("/orders/fail")
    assert cleared.status_code == 200
    journey.failed = failed
    ui.shots.take(ui.page, "failed-run")

    assert ui.run_steps("Errored") == [ORDERS_STEP]
    assert set(ui.run_steps("Succeeded")) == BEFORE_ORDERS
    (failure,) = ui.step_failures()
    assert f'op "{ORDERS_STEP}"' in failure and REFUSED in failure, failure
    ui.shots.take(ui.page, "failed-run-step-failure")


def test_a_failed_run_marks_only_what_failed(ui: DagsterUI, journey: Journey) -> None:
    failed = needs(journey.failed, "the failed run", by="the refused orders test")
    backfill = needs(journey.backfill, "the backfill run", by="the backfill test")
    stored = needs(journey.stored_cursor, "the orders' stored cursor", by="the orders page test")
    # what the run read is up to date, from that run
    products = ui.open_asset(f"{SOURCE}/products").latest_materialization()
    assert (products.run_id, products.icon) == (failed.run_id, "run_success")
    ui.shots.take(ui.page, "products-after-failure")

    # the orders: the failed attempt shown, the metadata still that of the last success
    orders = ui.open_asset(f"{SOURCE}/orders")
    attempt = orders.latest_materialization()
    assert (attempt.run_id, attempt.icon) == (failed.run_id, "check_failed")
    assert attempt.tag == f"Failed in {failed.run_id[:8]}"
    assert orders.metadata("this run") == BACKFILL_SAYS
    assert orders.metadata("cursor (stored)") == stored
    ui.shots.take(ui.page, "orders-after-failure")
    alert, latest = orders.failed_attempt()
    assert alert == f"Run {failed.run_id[:8]} failed, and did not materialize this asset."
    assert latest == f"Materialized in run {backfill.run_id[:8]}"
    ui.shots.take(ui.page, "orders-events-after-failure")


def test_a_failed_run_leaves_the_state_checks_of_what_it_did_not_fail_as_they_were(
        ui: DagsterUI, journey: Journey) -> None:
    needs(journey.failed, "the failed run", by="the refused orders test")
    checks = ui.open_asset(f"{SOURCE}/products").open_checks()
    ui.shots.take(ui.page, "products-checks-after-failure")
    # nothing of the products was ever rejected or parked (quarantined ones there are)
    assert (checks["nothing_rejected"], checks["nothing_parked"]) == ("Succeeded", "Succeeded")


def test_ctrl_c_stops_everything(dev: Dev) -> None:
    code, left = dev.interrupt()
    assert code == 0, dev.output()[-3000:]
    assert not left, f"still running after Ctrl-C: {sorted(left)}"
    said = dev.output()
    assert "No dagster instance configuration file" not in said  # its dagster.yaml was read
    assert "Use 'dg dev' instead" not in said
