"""Many shops synced at once through Dagster's queued run coordinator, state on PostgreSQL:
in-process run workers, then the celery executor — each against one shop alone.

Starts N+1 fake WooCommerce shops (one to time alone, N to sync together), a sandbox per
executor, a throw-away PostgreSQL (``.ci/postgres.sh``) holding Dagster's storage and the
state store (a schema each, as ``deploy/README.md`` lays them out), Dagster's daemon and
webserver on ``deploy/dagster.yaml``, and for celery a Redis (``.ci/redis.sh``) and worker
processes (``python -m pipelines.worker``). Then, per executor: the alone shop's sync by
itself, then the N shops' syncs submitted at once — in process, each shop's own sync job,
the coordinator's limits deciding how many run together; on celery, one run of
``sync_all_sources`` selecting their assets, its steps on the workers. Prints wall times, items/s, the
peak memory per worker, lost and duplicated orders (read from the shops and the API, must be
0 where every run succeeded; a failed run, named in the table, has stopped saying why and
leaves its shop to the next run), and lock or serialization errors in the run logs (must
be 0).

    python bench/scale.py [--shops 50] [--orders 2000] [--executors in_process,celery]
                          [--celery-workers 2] [--fault-rate 0.0] [--read-process]

``--read-process`` has every shop read and map in a process of its own
(``tuning.read_process``): what that costs or gains when many runs already share the cores.
The read processes' peak memory is printed beside the workers'.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
import yaml

try:
    from bench._dagster_stack import ROOT, DagsterStack, Launch, PeakMemory
    from bench._sandbox import start_sandbox_process
    from bench._scale_check import check_shops
except ModuleNotFoundError:  # run as a script: the project's root is not on sys.path
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench._dagster_stack import ROOT, DagsterStack, Launch, PeakMemory
    from bench._sandbox import start_sandbox_process
    from bench._scale_check import check_shops
from pipelines.engine.config import load_config
from pipelines.engine.runner import selected_resources
from pipelines.engine.state import StateStore
from sandbox.marketing.settings import DEFAULT_KEY
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_many

API_KEY_ENV = "SHOPSYNC_BENCH_API_KEY"
#: what a lock or serialization failure of the state store or Dagster's storage looks like
LOCK_ERRORS = re.compile(r"deadlock detected|could not serialize|database is locked|"
                         r"LockNotAvailable|SerializationFailure|could not obtain lock",
                         re.IGNORECASE)


def service(script: str) -> str:
    """The URL a ``.ci`` service script prints (it starts the service if needed)."""
    return subprocess.run([str(ROOT / ".ci" / script)], check=True, capture_output=True,
                          text=True).stdout.strip()


def fresh_schema(url: str, name: str) -> str:
    """A new, empty schema in the database of ``url`` (as deploy/README.md lays Dagster and
    the ledger out); the URL whose connections use it."""
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))
        conn.execute(sa.text(f'CREATE SCHEMA "{name}"'))
    engine.dispose()
    return (sa.make_url(url).update_query_dict({"options": f"-csearch_path={name}"})
            .render_as_string(hide_password=False))


def shops_config(path: Path, base_url: str, shops: dict[str, RunningFakeShop],
                 execution: dict[str, object] | None, read_process: bool = False) -> None:
    sources = [{
        "name": name, "platform": "woocommerce",
        "connection": {"url": shop.root, "key_env": f"{name.upper()}_KEY",
                       "secret_env": f"{name.upper()}_SECRET"},
        "data_source": {"label": name}, "schedule": None, "lookback_seconds": 0,
        **({"tuning": {"read_process": True}} if read_process else {}),
    } for name, shop in shops.items()]
    config: dict[str, object] = {
        "destination": {"base_url": base_url, "api_key_env": API_KEY_ENV},
        "state_url_env": "SHOPSYNC_BENCH_STATE_URL", "automation": False, "sources": sources,
    }
    if execution:
        config["execution"] = execution
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def items_in(state_url: str, sources: list[str]) -> int:
    with StateStore(state_url) as state:
        return sum(n for source in sources for statuses in state.counts(source).values()
                   for n in statuses.values())


def lock_errors(dagster_url: str, home: Path) -> int:
    """Lock or serialization failures in the runs' event logs and the services' logs."""
    engine = sa.create_engine(dagster_url)
    with engine.connect() as conn:
        logged = [row[0] for row in conn.execute(sa.text(
            "SELECT event FROM event_logs WHERE event ILIKE '%lock%'"
            " OR event ILIKE '%serializ%'"))]
    engine.dispose()
    texts = logged + [p.read_text(errors="replace") for p in home.glob("*.log")]
    return sum(len(LOCK_ERRORS.findall(text)) for text in texts)


@dataclass(frozen=True)
class Outcome:
    executor: str
    alone_seconds: float
    together_seconds: float
    items_alone: int
    items_together: int
    failed: list[str]
    lost: int
    duplicated: int
    held_back: int
    workers: int
    peak_mib: float
    lock_errors: int
    #: read processes seen (``--read-process``), and the highest peak among them (MiB)
    read_processes: int = 0
    read_peak_mib: float = 0.0


def runs_of(executor: str, config: Path, sources: list[str]) -> list[Launch]:
    """In process: a run of each source's own sync job, queued by the coordinator; on celery:
    one run of ``sync_all_sources`` selecting the sources' assets, its steps on the workers."""
    if executor != "celery":
        return [Launch(f"{name}_sync", name) for name in sources]
    loaded = load_config(config)
    keys = tuple((name, resource) for name in sources
                 for resources in selected_resources(loaded.source(name)).values()
                 for resource in resources)
    return [Launch("sync_all_sources", f"sync_all_sources: {len(sources)} sources", keys)]


def one_executor(executor: str, args: argparse.Namespace, folder: Path, admin_url: str,
                 shops: dict[str, RunningFakeShop]) -> Outcome:
    """The alone shop's run, then the N shops' runs at once, on ``executor``, into a sandbox
    of its own (what one executor wrote cannot hide what another lost)."""
    sandbox = start_sandbox_process("--visibility-delay", "0",
                                    "--fault-rate", str(args.fault_rate))
    try:
        return _one_executor(executor, args, folder, admin_url, sandbox.base_url, shops)
    finally:
        sandbox.stop()


def _one_executor(executor: str, args: argparse.Namespace, folder: Path, admin_url: str,
                  sandbox_url: str, shops: dict[str, RunningFakeShop]) -> Outcome:
    dagster_url = fresh_schema(admin_url, f"bench_dagster_{executor}")
    state_url = fresh_schema(admin_url, f"bench_state_{executor}")
    config = folder / f"shops-{executor}.yaml"
    execution = None
    if executor == "celery":
        execution = {"executor": "celery", "broker_url_env": "SHOPSYNC_BENCH_BROKER"}
    shops_config(config, sandbox_url, shops, execution, args.read_process)
    pg = sa.make_url(dagster_url)
    env = {"SHOPSYNC_CONFIG": str(config), "SHOPSYNC_BENCH_STATE_URL": state_url,
           API_KEY_ENV: DEFAULT_KEY, "DAGSTER_PG_HOST": str(pg.host),
           "DAGSTER_PG_PORT": str(pg.port), "DAGSTER_PG_USER": str(pg.username),
           "DAGSTER_PG_PASSWORD": str(pg.password), "DAGSTER_PG_DB": str(pg.database),
           "PGOPTIONS": f"-csearch_path=bench_dagster_{executor}",
           **{f"{name.upper()}_KEY": shop.key for name, shop in shops.items()},
           **{f"{name.upper()}_SECRET": shop.secret for name, shop in shops.items()}}
    if executor == "celery":
        env["SHOPSYNC_BENCH_BROKER"] = service("redis.sh")
    stack = DagsterStack(folder / f"home-{executor}", env, ROOT / "deploy" / "dagster.yaml")
    memory = PeakMemory({"run worker": re.compile(r"spawn_main|api execute_run"),
                         "celery worker": re.compile(r"celery.*worker"),
                         "read process": re.compile(r"-m pipelines\.engine\.read_process")})
    memory.start()
    try:
        stack.start(celery_workers=args.celery_workers if executor == "celery" else 0)
        alone, together = list(shops)[0], list(shops)[1:]
        started = time.monotonic()
        statuses = stack.run_all(runs_of(executor, config, [alone]))
        alone_seconds = time.monotonic() - started
        started = time.monotonic()
        statuses |= stack.run_all(runs_of(executor, config, together))
        together_seconds = time.monotonic() - started
    finally:
        memory.stop()
        stack.stop()
    failed = sorted(job for job, status in statuses.items() if status.value != "SUCCESS")
    checks = check_shops(sandbox_url, DEFAULT_KEY, state_url,
                         {name: (shop.root, shop.key, shop.secret)
                          for name, shop in shops.items()})
    for check in checks:
        if check.lost or check.duplicated:
            print(f"  {executor}: {check.source}: {check.at_shop} orders at the shop,"
                  f" {check.at_destination} at the destination, {check.held_back} held back:"
                  f" {', '.join(check.examples)}")
    workers = "celery worker" if executor == "celery" else "run worker"
    return Outcome(executor, alone_seconds, together_seconds, items_in(state_url, [alone]),
                   items_in(state_url, together), failed, sum(c.lost for c in checks),
                   sum(c.duplicated for c in checks), sum(c.held_back for c in checks),
                   *memory.summary(workers), lock_errors(dagster_url, stack.home),
                   *memory.summary("read process"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shops", type=int, default=50)
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--executors", default="in_process,celery")
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--read-process", action="store_true",
                        help="every shop reads and maps in a process of its own")
    args = parser.parse_args()
    admin_url = os.environ.get("SHOPSYNC_BENCH_POSTGRES_URL") or service("postgres.sh")
    results: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-scale-") as tmp:
        folder = Path(tmp)
        running = start_many(*[("--orders", str(args.orders), "--customers",
                                str(max(10, args.orders // 10)), "--products", "50",
                                "--seed", str(n)) for n in range(args.shops + 1)])
        shops = {f"shop_{n:03d}": shop for n, shop in enumerate(running)}
        try:
            for executor in args.executors.split(","):
                results.append(one_executor(executor, args, folder, admin_url, shops))
        finally:
            for shop in running:
                shop.stop()
    reading = ", each shop reading in a process of its own" if args.read_process else ""
    print(f"{args.shops} fake WooCommerce shops of {args.orders} orders synced at once into a"
          f" sandbox per executor (fault rate {args.fault_rate}), Dagster's queued run"
          f" coordinator, state on PostgreSQL{reading}; {os.cpu_count()} CPUs, load average"
          f" {os.getloadavg()[0]:.1f} at the end")
    print(f"  {'executor':<11}{'1 shop s':>9}{'N shops s':>10}{'x 1 shop':>9}{'items/s 1':>10}"
          f"{'items/s N':>10}{'workers':>8}{'peak MiB':>9}{'lost':>6}{'dup':>5}{'held':>6}"
          f"{'locks':>6}  failed runs")
    for r in results:
        print(f"  {r.executor:<11}{r.alone_seconds:>9.1f}{r.together_seconds:>10.1f}"
              f"{r.together_seconds / r.alone_seconds:>9.1f}"
              f"{r.items_alone / r.alone_seconds:>10.0f}"
              f"{r.items_together / r.together_seconds:>10.0f}{r.workers:>8}{r.peak_mib:>9.0f}"
              f"{r.lost:>6}{r.duplicated:>5}{r.held_back:>6}{r.lock_errors:>6}"
              f"  {', '.join(r.failed) or '-'}")
    for r in results:
        if r.read_processes:
            print(f"  {r.executor}: {r.read_processes} read processes, the highest peak"
                  f" {r.read_peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
