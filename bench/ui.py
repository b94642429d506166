"""The demo's sync launched from the Dagster UI, against the same sync in process.

Starts ``shopsync dev`` (free ports, a temporary ``SHOPSYNC_HOME``, automation off) and
Debian's headless Chromium on its UI, driven as the browser test drives it (``tests/ui``):
waits for the code location, reloads it, launches the demo's sync with the job's own button,
then its reconciliation. Then runs the same sync in this process
(``pipelines.demo.run_demo``, what ``shopsync demo`` runs) as the baseline. Prints each time,
the UI's sync as a ratio of the baseline's, and the UI's sync in parts, read from the run's
own events (``bench/_run_timeline.py``).

    python bench/ui.py [--orders 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from pipelines.cli.demo import dev_instance_home
from pipelines.demo import run_demo

try:
    from bench._run_timeline import Timeline, run_timeline
    from tests.ui.dev import START_BOUND, start_dev
    from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots
except ModuleNotFoundError:  # run as a script: the project's root is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._run_timeline import Timeline, run_timeline
    from tests.ui.dev import START_BOUND, start_dev
    from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots

SOURCE = "demo_shop"
PLATFORM = "woocommerce"  # shopsync dev's default
#: far above what they take: only a hang stops the benchmark
LOAD_BOUND = 300.0
RUN_BOUND = 600.0


def through_the_ui(orders: int) -> tuple[dict[str, float], Timeline]:
    """The times of ``shopsync dev`` and of the runs launched from its UI, in seconds, and
    the sync's in parts."""
    times: dict[str, float] = {}
    sync: tuple[str, float, float] = ("", 0.0, 0.0)  # its run, click and end shown (wall)
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-ui-") as tmp:
        folder = Path(tmp)
        dev = start_dev(folder / "home", folder / "dev.log", "--orders", str(orders))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                     headless=True)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                ui = DagsterUI(page, dev.wait_serving(START_BOUND), Screenshots(folder))
                ui.wait_location_loaded(timeout=LOAD_BOUND)
                times["loaded"] = time.monotonic() - dev.started
                times["reloaded"] = ui.reload_location(LOAD_BOUND)
                for job in ("sync", "reconcile"):
                    launch = ui.launch_job(f"{SOURCE}_{job}")
                    status = ui.wait_run_finished(RUN_BOUND)
                    times[job] = time.monotonic() - launch.clicked
                    if job == "sync":  # on the clock of the run's events
                        shown = time.time()
                        sync = (launch.run_id, shown - times[job], shown)
                    if status != "Success":
                        sys.exit(f"the {job} run ended {status}: see {folder / 'dev.log'}")
                    times[f"{job} run"] = ui.run_duration()
                browser.close()
        finally:
            dev.stop()
        parts = run_timeline(dev_instance_home(PLATFORM, folder / "home"), *sync)
    return times, parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=200)
    args = parser.parse_args()
    ui, parts = through_the_ui(args.orders)
    demo = run_demo(orders=args.orders)
    if not demo["success"]:
        sys.exit("the in-process sync failed")
    baseline = float(demo["seconds"])

    print(f"the demo's sync ({args.orders} orders, {demo['platform']}) from the Dagster UI of"
          f" shopsync dev, and in process; {os.cpu_count()} CPUs, load average"
          f" {os.getloadavg()[0]:.1f} at the end")
    rows = [
        ("code location loaded (shopsync dev started -> Loaded shown)", ui["loaded"], False),
        ("code location reloaded (Reload clicked -> reloaded)", ui["reloaded"], False),
        ("sync from the UI (launch clicked -> Success shown)", ui["sync"], True),
        ("  the run itself, as its page says (start -> end)", ui["sync run"], True),
        ("reconciliation from the UI (launch clicked -> Success)", ui["reconcile"], False),
        ("  the run itself, as its page says (start -> end)", ui["reconcile run"], False),
        ("baseline: the same sync in process (run_demo)", baseline, True),
    ]
    print(f"  {'':<58}{'seconds':>9}{'x baseline':>12}")
    for what, seconds, ratio in rows:
        print(f"  {what:<58}{seconds:>9.1f}" + (f"{seconds / baseline:>11.1f}x" if ratio else ""))
    print(f"  the sync from the UI in parts ({parts.events} events in its log):")
    for what, seconds in parts.rows():
        print(f"    {what:<56}{seconds:>9.1f}")


if __name__ == "__main__":
    main()
