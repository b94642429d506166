"""The Dagster UI of ``shopsync dev``, in a real browser, used as a person would: wait for
the code location, launch the demo's sync with the job's own button, watch the run succeed,
then read the orders asset (counts, checks, reasons items were held back) and, after a
reconciliation launched the same way, its report. Ctrl-C then stops everything.
Screenshots of each page go to ``build/ui-screenshots/<test name>/``, with the output of
``shopsync dev``; ``-s`` prints the timings."""

from __future__ import annotations

import os
import time

import pytest

from tests.ui.dev import Dev
from tests.ui.pages import CHROMIUM, DagsterUI

# skipped on a machine without Chromium; never in CI, where .ci/run installs it
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason=f"no Chromium at {CHROMIUM}: install it with .ci/chromium.sh (Debian's package)",
)

SOURCE = "demo_shop"
#: bounds far above what they take, so that a crowded machine waits and only a hang fails
RUN_BOUND = 600.0
LOAD_BOUND = 300.0
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
#: the schedules and sensors, stopped here (``--no-automation``: no run but the test's own);
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
#: the steps of the sync, named after what they materialize
STEPS = {"demo_shop__vouchers", "demo_shop__products_variations_images"}
#: a backfill window of the fake shop's history with orders in it and none held back
BACKFILL = ("2025-06-01", "2025-06-12")
BACKFILL_CONFIG = (f'resources:\n  sync_window:\n    config:\n      start: "{BACKFILL[0]}"\n'
                   f'      end: "{BACKFILL[1]}"\n')


@pytest.mark.timeout(1800)  # startup, two runs and the pages, each bounded above
def test_a_sync_launched_from_the_ui_shows_its_counts_checks_and_reconciliation(
    dev: Dev, ui: DagsterUI,
) -> None:
    ui.wait_location_loaded(timeout=LOAD_BOUND)
    ui.timed("code location shown loaded, from the start of shopsync dev (and the browser)",
             time.monotonic() - dev.started)
    ui.shots.take(ui.page, "code-location")
    ui.timed("code location reloaded (Reload clicked → loaded)", ui.reload_location(LOAD_BOUND))
    automations = ui.automations(list(AUTOMATIONS))
    ui.shots.take(ui.page, "automation")
    assert {name: on for name, (on, _) in automations.items()} == dict.fromkeys(AUTOMATIONS, False)
    assert all(about and "No description" not in about for _, about in automations.values())
    assert "turned on when the location loads" in automations["demo_shop_schedule"][1]

    sync = ui.launch_job(f"{SOURCE}_sync")
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    ui.timed("sync run (launch clicked → Success shown)", time.monotonic() - sync.clicked)
    ui.timed("sync run, as its page says (start → end)", ui.run_duration())
    ui.shots.take(ui.page, "sync-run")
    steps = ui.run_steps("Succeeded")
    ui.shots.take(ui.page, "sync-run-steps")
    assert STEPS <= set(steps) and "demo_shop__coupons" not in steps, steps

    orders = ui.open_asset(f"{SOURCE}/orders")
    latest = orders.latest_materialization()
    assert (latest.run_id, latest.icon) == (sync.run_id, "run_success")
    ui.shots.take(ui.page, "orders")
    stored = orders.metadata("cursor (stored)")
    lineage = orders.lineage()
    assert {f"{SOURCE}/{name}" for name in UPSTREAM["orders"]} <= lineage["upstream"], lineage
    assert f"{SOURCE}/reconciliation" in lineage["downstream"]
    run = {name: int(orders.metadata(f"run: {name}"))
           for name in ("extracted", "accepted", "rejected", "quarantined")}
    assert run["accepted"] > 0 and run["quarantined"] > 0
    assert run["extracted"] == run["accepted"] + run["rejected"] + run["quarantined"]
    ledger = orders.table("items by state (ledger)", "state")
    assert ledger["accepted"]["items"] == str(run["accepted"])  # not read back yet
    assert ledger["quarantined"]["items"] == str(run["quarantined"])
    reasons = orders.table("top reasons held back (ledger)", "reason")
    assert any(BAD_EMAIL in reason for reason in reasons), reasons
    assert orders.open_checks() == ORDERS_CHECKS
    quarantined = orders.open_check("nothing_quarantined")
    assert f"{run['quarantined']} orders quarantined in the ledger" in quarantined
    assert BAD_EMAIL in quarantined  # its top reasons
    ui.shots.take(ui.page, "orders-check-quarantined")
    held = orders.open_check("run_quality")  # the run's rows held back, by any rule
    assert f"{run['quarantined']} of {run['extracted']} rows held back in this run" in held
    ui.shots.take(ui.page, "orders-check-quality")
    orders.lineage_graph(shows=sorted(UPSTREAM["orders"]))
    ui.shots.take(ui.page, "orders-lineage")
    for asset, upstream in UPSTREAM.items():
        if asset != "orders":
            shown = ui.open_asset(f"{SOURCE}/{asset}").lineage()["upstream"]
            assert {f"{SOURCE}/{name}" for name in upstream} <= shown, (asset, shown)
    ui.shots.take(ui.page, "addresses-lineage-section")

    reconcile = ui.launch_job(f"{SOURCE}_reconcile")
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    ui.timed("reconciliation run (launch clicked → Success shown)",
             time.monotonic() - reconcile.clicked)
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

    backfill = ui.launch_from_launchpad(f"{SOURCE}_sync", BACKFILL_CONFIG)
    assert ui.wait_run_finished(RUN_BOUND) == "Success"
    ui.timed("backfill run (launch clicked → Success shown)", time.monotonic() - backfill.clicked)
    ui.shots.take(ui.page, "backfill-run")
    orders = ui.open_asset(f"{SOURCE}/orders")
    assert orders.latest_materialization().run_id == backfill.run_id
    assert orders.metadata("this run") == (f"backfill of changes {BACKFILL[0]} to {BACKFILL[1]}"
                                           " (cursor left alone)")
    assert orders.metadata("cursor (stored)") == stored
    assert orders.metadata("cursor (backfill reached)").startswith("2025-06-")
    assert int(orders.metadata("run: accepted")) > 0
    assert int(orders.metadata("run: quarantined")) == 0  # a clean window
    ui.shots.take(ui.page, "orders-after-backfill")
    checks = orders.open_checks()
    assert (checks["run_quality"], checks["nothing_quarantined"]) == ("Succeeded", "Failed")
    quarantined = orders.open_check("nothing_quarantined")
    assert f"{run['quarantined']} orders quarantined in the ledger" in quarantined
    ui.shots.take(ui.page, "orders-check-quarantined-after-backfill")

    code, left = dev.interrupt()
    assert code == 0, dev.output()[-3000:]
    assert not left, f"still running after Ctrl-C: {sorted(left)}"
    said = dev.output()
    assert "No dagster instance configuration file" not in said  # its dagster.yaml was read
    assert "Use 'dg dev' instead" not in said
