"""The Dagster UI on a code location of many shops: how long the location takes to load,
and what a person sees on the pages they would open first.

Writes a configuration of N shops (``tests/assets/many_shops.py``, automation off: nothing
runs), starts ``dg dev`` on it as ``shopsync dev`` starts it (its instance in a temporary
folder, free port) and Debian's headless Chromium on its UI, driven as the browser test
drives it (``tests/ui``). Times the location's load (the Deployment page says "Loaded") and
each page until it shows its first shop, and saves a screenshot of each in ``--out``.

``--layout shop_partitions`` serves the shops as partitions (``layout:`` in the file) instead
of a group per shop, after recording a materialization of one shop in three and of its
``run_rejections`` check (as a run would leave them), so that the pages show a partition
status per shop.

    python bench/ui_scale.py [--shops 500] [--out bench-ui-scale] [--layout shop_partitions]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from playwright.sync_api import expect, sync_playwright

try:
    from tests.assets.many_shops import many_shops
    from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots
except ModuleNotFoundError:  # run as a script: the project's root is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.assets.many_shops import many_shops
    from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots
from pipelines.cli.demo import (
    free_port,
    stop_dagster,
    wait_serving,
    write_instance,
)

#: far above what they take: only a hang stops the benchmark
LOAD_BOUND = 900.0
PAGE_BOUND = 300.0
#: page -> what shows that it has drawn the shops
PAGES = {
    "jobs": ("/jobs", "shop_0001_sync"),
    "automations": ("/automation", "shop_0001_schedule"),
    "asset-catalog": ("/assets", "shop_0001"),
    "lineage": ("/asset-groups", "shop_0001"),
    "one-shop-lineage": ("/locations/shopsync/asset-groups/shop_0001", "orders"),
    # the job's page draws its assets, headed by its schedule
    "one-job": ("/locations/shopsync/jobs/shop_0001_sync", "Every 15 minutes"),
}
#: the same pages, and one asset's partitions, with shops as partitions
PARTITION_PAGES = {
    "jobs": ("/jobs", "woocommerce_sync"),
    "automations": ("/automation", "woocommerce_schedule"),
    "asset-catalog": ("/assets", "magento"),
    "lineage": ("/asset-groups", "woocommerce"),
    "one-platform-lineage": ("/locations/shopsync/asset-groups/woocommerce", "orders"),
    "one-job": ("/locations/shopsync/jobs/woocommerce_sync", "Every minute"),
    "one-asset-partitions": ("/assets/woocommerce/orders?view=partitions", "shop_0000"),
    "one-asset-checks": ("/assets/woocommerce/orders?view=checks", "run_rejections"),
}


def materialize_partitions(dagster_home: Path, shops: int) -> None:
    """A materialization of one shop in three, and of its ``run_rejections`` check."""
    import dagster as dg

    sources = many_shops(shops)["sources"]
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        for i in range(0, shops, 3):
            platform = sources[i]["platform"]
            key, shop = dg.AssetKey([platform, "orders"]), f"shop_{i:04d}"
            instance.report_runless_asset_event(dg.AssetMaterialization(
                key, partition=shop, metadata={"run: accepted": i, "ledger: visible": 10 * i}))
            instance.report_runless_asset_event(dg.AssetCheckEvaluation(
                asset_key=key, check_name="run_rejections", passed=i % 2 == 0, partition=shop,
                metadata={"rejected in this run": i % 2}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shops", type=int, default=500)
    parser.add_argument("--out", type=Path, default=Path("bench-ui-scale"))
    parser.add_argument("--layout", choices=("shop_groups", "shop_partitions"),
                        default="shop_groups")
    args = parser.parse_args()
    pages = PARTITION_PAGES if args.layout == "shop_partitions" else PAGES
    args.out.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-ui-scale-") as tmp:
        folder = Path(tmp)
        config = folder / "shops.yaml"
        config.write_text(yaml.safe_dump({**many_shops(args.shops), "automation": "off",
                                          "layout": args.layout}))
        workspace = write_instance(folder / "dagster")
        if args.layout == "shop_partitions":
            materialize_partitions(folder / "dagster", args.shops)
        port = free_port("127.0.0.1")
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "SHOPSYNC_CONFIG": str(config),
               "DAGSTER_HOME": str(folder / "dagster")}
        env.pop("SHOPSYNC_DEMO_PLATFORM", None)
        log = (args.out / "dg-dev.log").open("wb")
        started = time.monotonic()
        dagster = subprocess.Popen(
            [sys.executable, "-m", "dagster_dg_cli.cli", "dev", "-w", str(workspace),
             "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=folder)
        try:
            wait_serving(url, dagster, timeout=LOAD_BOUND)
            times["UI serving"] = time.monotonic() - started
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                     headless=True)
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                ui = DagsterUI(page, url, Screenshots(args.out))
                ui.wait_location_loaded(timeout=LOAD_BOUND)
                times["location loaded"] = time.monotonic() - started
                ui.shots.take(page, "locations", full_page=False)
                for name, (path, shown) in pages.items():
                    opened = time.monotonic()
                    ui.goto(path)
                    try:
                        expect(page.get_by_text(shown).first).to_be_visible(
                            timeout=PAGE_BOUND * 1000)
                        times[f"page {name}"] = time.monotonic() - opened
                    except AssertionError:  # what it shows instead is in the screenshot
                        times[f"page {name} (not shown)"] = time.monotonic() - opened
                    print(f"{name}: {ui.shots.take(page, name, full_page=False)}", flush=True)
                browser.close()
        finally:
            stop_dagster(dagster)
            log.close()
    print(f"{args.shops} shops ({args.layout}), load average {os.getloadavg()[0]:.2f}:")
    for what, seconds in times.items():
        print(f"  {what:<24} {seconds:7.1f} s")


if __name__ == "__main__":
    main()
