"""How long the code location of many shops takes to load, as Dagster loads it.

Writes a configuration of N shops (``tests/assets/many_shops.py``: the HTTP platforms in
turn, at addresses nothing answers on) and, in a fresh interpreter each, times what the code
server does before the UI can show the location: import ``pipelines.definitions``, build
``defs`` from the file, build the repository and resolve every job
(``load_all_definitions``), and the repository's snapshot the code server sends the UI
(``RepositorySnap.from_def`` with deferred job snapshots, serialized). The same for one shop,
in the same run: on a busy machine the ratio says more than the seconds. Prints the load
average with the figures.

``--layouts`` times each layout of the location (``layout:`` in the file: ``shop_groups``, a
group per shop, and ``shop_partitions``, shops as partitions) on the same shops, in the same
run.

    python bench/many_shops.py [--shops 500] [--keep shops.yaml]
                               [--layouts shop_groups,shop_partitions]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:  # the child times the import of Dagster: not imported before it
    import dagster as dg

try:
    from tests.assets.many_shops import many_shops
except ModuleNotFoundError:  # run as a script: the project's root is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.assets.many_shops import many_shops

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("import", "build", "repository", "snapshot")
#: the values of the configuration's ``layout``
LAYOUTS = ("shop_groups", "shop_partitions")


def _build() -> tuple[float, dg.Definitions]:
    """The import's seconds and the ``Definitions`` built from ``$SHOPSYNC_CONFIG``."""
    start = time.perf_counter()
    import pipelines.definitions as location

    imported = time.perf_counter() - start
    return imported, location.load_definitions()


def child() -> None:
    """One load, timed phase by phase; prints them as JSON."""
    import warnings

    warnings.filterwarnings("ignore")  # Dagster's deprecation notes on its own snapshot
    times: dict[str, float] = {}
    start = time.perf_counter()
    times["import"], defs = _build()
    times["build"] = time.perf_counter() - start - times["import"]
    mark = time.perf_counter()
    repository = defs.get_repository_def()
    repository.load_all_definitions()
    times["repository"] = time.perf_counter() - mark
    mark = time.perf_counter()
    from dagster._core.remote_representation.external_data import RepositorySnap
    from dagster._serdes import serialize_value

    sent = serialize_value(RepositorySnap.from_def(repository, defer_snapshots=True))
    times["snapshot"] = time.perf_counter() - mark
    print(json.dumps({**times, "total": time.perf_counter() - start, "bytes": len(sent),
                      "assets": len(repository.asset_graph.get_all_asset_keys()),
                      "checks": len(repository.asset_graph.asset_check_keys),
                      "jobs": len(repository.get_all_jobs()),
                      "schedules": len(repository.schedule_defs)}))


def load(config: Path) -> dict[str, float]:
    env = {**os.environ, "SHOPSYNC_CONFIG": str(config)}
    env.pop("SHOPSYNC_DEMO_PLATFORM", None)
    done = subprocess.run([sys.executable, __file__, "--child"], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shops", type=int, default=500)
    parser.add_argument("--keep", type=Path, help="also write the configuration here")
    parser.add_argument("--layouts", default="shop_groups",
                        help=f"comma-separated, among {', '.join(LAYOUTS)}")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return
    models = args.layouts.split(",")
    unknown = sorted(set(models) - set(LAYOUTS))
    if unknown:
        parser.error(f"--layouts: no layout {', '.join(unknown)}; use {', '.join(LAYOUTS)}")
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-shops-") as tmp:
        rows = {}
        for count in (1, args.shops):
            for model in models:
                path = Path(tmp) / f"shops{count}-{model}.yaml"
                path.write_text(yaml.safe_dump({**many_shops(count), "layout": model},
                                               sort_keys=False))
                if args.keep and count == args.shops:
                    args.keep.write_text(path.read_text())
                before = os.getloadavg()[0]
                rows[model, count] = {**load(path),
                                      "load avg": (before + os.getloadavg()[0]) / 2}
    print(f"{'layout':>15} {'shops':>6} {'assets':>7} {'checks':>7} {'jobs':>5} {'sched':>5}"
          + "".join(f" {p:>10}" for p in PHASES)
          + f" {'total s':>8} {'sent MB':>8} {'load avg':>8}")
    for (model, count), row in rows.items():
        print(f"{model:>15} {count:>6} {row['assets']:>7.0f} {row['checks']:>7.0f}"
              f" {row['jobs']:>5.0f} {row['schedules']:>5.0f}"
              + "".join(f" {row[p]:>10.2f}" for p in PHASES)
              + f" {row['total']:>8.2f} {row['bytes'] / 1e6:>8.1f} {row['load avg']:>8.2f}")
    for model in models:
        one, many = rows[model, 1], rows[model, args.shops]
        print(f"{model}: {args.shops} shops load in {many['total']:.1f} s,"
              f" {many['total'] / one['total']:.1f} times one shop's {one['total']:.1f} s")


if __name__ == "__main__":
    main()
