"""A full sync of a large fake shop into the sandbox, then an unchanged rerun.

Starts the sandbox and a fake shop (``--source``: the WooCommerce API, the SQL database or
the drop folder) with N orders (default 100 000) on free ports, runs the engine over every
stream, and prints records/s, the time per stream, where the sync's time went by stage
(read/parse, map, validate, the wait for great-expectations, quality, diff, ledger,
encode/push: share of the sync's wall time and CPU seconds of the syncing thread), the CPU
seconds of each process, the peak memory of the syncing process, what it and the read
process wrote to storage (the ledger's WAL and checkpoints; a drop folder's spill), the
second run's time and write count (which should be zero) as a share of the first's, and
last the push-only rate of the same items (``_push_only.py``), with the sync's pushes as
a share of it, and the CPU an item costs each way (every process's, over the items
pushed): both runs keep the same cores busy, so at equal use of them their rates go as the
inverse of those costs — the share the engine's own work (reading, mapping, checking, recording) leaves the sync.

``--baseline DIR`` runs the same sync first with the engine of another checkout (its
``PYTHONPATH``, e.g. ``/work/main``), in a process of its own, and prints the ratio of the
two: figures of one run, taken at the same load. ``--read-process`` reads and maps the
streams in a process of their own (``tuning.read_process``), in this checkout's run only:
with ``--baseline`` of this same checkout, the two ways side by side;
``--baseline-read-process`` makes the baseline read in a process too.
``--repeat N`` runs N such pairs, one after the other, and prints the medians (this
checkout's runs after the first in processes of their own, so that each peak RSS is its
run's, not the highest so far). Each pair
also prints the engine's CPU (the syncing and read processes') per CPU second of the
sandbox's: the sandbox takes the same requests in both runs, so its CPU measures the
machine's pace, which on two shared cores changes from one run to the next by as much as
a change to the engine would.
``--baseline-without-quality`` makes the baseline skip the quality checks (its suites, their
plans and great-expectations' import, and the known-products look-ups): with ``--baseline``
of this same checkout, what the checks add to a sync's time, measured as the difference of
two syncs rather than as the time the syncing thread spends in them (that thread waits for
its pages about half the time, and checks while the read process reads on), and to the CPU
all processes spend. Each run with the checks also prints their own CPU — their stage, which
no other task interrupts, and great-expectations' import and plans — as a share of all
processes' CPU: on two busy cores, the wall difference of two syncs varies by a few percent
from pair to pair, CPU much less.

    python bench/sync.py [--source woocommerce|sql|files] [--orders 100000]
        [--customers 2000] [--products 500] [--baseline DIR] [--read-process]
        [--baseline-read-process] [--baseline-without-quality] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pipelines.demo import Server, demo_config, demo_env, demo_servers
from pipelines.engine.quality import check
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore

try:
    from bench._push_only import push_only
except ModuleNotFoundError:  # run as a script (or with another checkout's bench/ first)
    from _push_only import push_only  # type: ignore[no-redef]

SOURCES = ("woocommerce", "sql", "files")
LABELS = {"read": "read/parse", "push": "encode/push"}
#: what each of the read process's stages (``read_process.ReadCosts``) does
READ_STAGE_LABELS = {
    "read": "its worker threads and a drop folder's parsing processes: the source's rows or"
            " lines fetched and made records",
    "map": "records mapped to items",
    "check": "each item's hash, bounds, item model, quality row and JSON",
    "send": "pages pickled and written to the pipe",
    "other": "its event loop, the connector's work outside its worker threads",
}


def reset_peak_rss() -> None:
    """Start this process's peak RSS over (Linux: ``clear_refs``), so that what
    ``peak_rss_mib`` reads after a sync is that sync's, not a run's before it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mib() -> float:
    """This process's peak RSS since ``reset_peak_rss``: Linux's ``VmHWM``. Not
    ``ru_maxrss``, which a process started from this one (a baseline's run) inherits: the
    parent's peak when it forked, after a first pair's runs, was reported as the child's."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        status = ""  # not Linux
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds(server: Server) -> float:
    """User + system CPU seconds of a server process so far (Linux ``/proc``)."""
    try:
        fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu() -> float:
    """CPU seconds of the child processes that ended (the read process, once joined)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def written_mib() -> tuple[float, float]:
    """MiB this process, and its child processes that ended (the read process, once
    joined), sent to storage so far: the ledger's writes, a drop folder's spill (Linux
    counts them as they are written to the page cache, in blocks of 512 bytes)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_oublock
    ended = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock
    return own * 512 / 2**20, ended * 512 / 2**20


def without_quality() -> None:
    """This process's syncs send every item the item models pass, unchecked: the quality
    stage, the great-expectations import and the known-products look-ups cost nothing."""
    import pipelines.engine.runner as runner
    import pipelines.engine.sync as sync

    sync.check_quality = lambda resource, items, *args: items  # type: ignore[assignment]
    runner.prepare = lambda resources: None  # type: ignore[assignment]


def measure(source: str, orders: int, customers: int, products: int,
            read_process: bool = False) -> dict[str, Any]:
    """One full sync and its unchanged rerun, as the figures ``report`` prints."""
    try:
        from pipelines.engine.stages import StageTimer
        timer: Any = StageTimer()
    except ModuleNotFoundError:  # an engine from before the stage timer: totals only
        timer = None
    with tempfile.TemporaryDirectory(prefix="shopsync-bench-") as tmp, demo_servers(
        orders=orders, customers=customers, products=products, visibility_delay=0.0,
        platform_name=source,
    ) as (sandbox, shop):
        config = demo_config(sandbox.url, shop.url, f"sqlite:///{Path(tmp) / 'state.db'}",
                             platform_name=source)
        if read_process:
            tuning = config.sources[0].tuning.model_copy(update={"read_process": True})
            sources = [config.sources[0].model_copy(update={"tuning": tuning})]
            config = config.model_copy(update={"sources": sources})
        state = StateStore(config.state_url or "")
        runner = SourceRunner(config, config.sources[0], state, demo_env(source))
        if timer is not None:
            runner.stages = timer
        servers = {"sandbox": cpu_seconds(sandbox), "shop": cpu_seconds(shop)}
        cpu, thread_cpu, children = process_cpu(), time.thread_time(), children_cpu()
        written = written_mib()
        reset_peak_rss()
        started = time.perf_counter()
        # each task's steps timed, where the engine can (``StageTimer.run``)
        timed = getattr(timer, "run", None)
        first = asyncio.run(timed(runner.run()) if timed is not None else runner.run())
        seconds = time.perf_counter() - started
        cpu, thread_cpu = process_cpu() - cpu, time.thread_time() - thread_cpu
        servers = {name: cpu_seconds(server) - servers[name]
                   for name, server in (("sandbox", sandbox), ("shop", shop))}
        # the processes the run started and ended: the read process (with the processes it
        # started itself), or a drop folder's processes parsing files apart
        servers["read process" if read_process else "parsing processes"] = \
            children_cpu() - children
        written = tuple(after - before for after, before in zip(written_mib(), written,
                                                                   strict=True))
        rss = peak_rss_mib()
        prepared = list(getattr(check, "prepared", []))
        if timer is not None:
            runner.stages = None
        started = time.perf_counter()
        second = asyncio.run(runner.run())
        second_seconds = time.perf_counter() - started
        sandbox_cpu = cpu_seconds(sandbox)
        push = asyncio.run(push_only(runner, [r for rs in runner.plan().values() for r in rs]))
        # the sandbox's CPU while the push-only run sent (reading the ledger touches it not)
        push = (*push, cpu_seconds(sandbox) - sandbox_cpu)
        state.close()
    return {
        "source": source, "orders": orders, "customers": customers, "products": products,
        "streams": [(r.stream, r.records, r.seconds, r.total("pushed"), r.total("accepted"),
                     r.total("quarantined")) for r in first],
        "seconds": seconds, "cpu": cpu, "thread_cpu": thread_cpu, "servers": servers,
        "rss": rss, "written": written, "prepared": prepared[0] if prepared else None, "stages": timer.seconds() if timer is not None else None,
        "elsewhere": timer.elsewhere() if hasattr(timer, "elsewhere") else None,
        "read_stages": dict(getattr(timer, "read_process", {})),
        "rerun": (second_seconds, sum(r.records for r in second),
                  sum(r.total("pushed") for r in second)),
        "push_only": push,
        "load": os.getloadavg(),
    }


def all_cpu(run: dict[str, Any]) -> float:
    """CPU seconds of every process of the run: the syncing one, the read process, the
    sandbox and the shop."""
    return float(run["cpu"] + sum(run["servers"].values()))


def report(run: dict[str, Any], name: str) -> None:
    records = sum(s[1] for s in run["streams"])
    seconds = run["seconds"]
    print(f"{name}: full sync of a fake {run['source']} shop: {run['orders']} orders,"
          f" {run['customers']} customers, {run['products']} products"
          f" (load {run['load'][0]:.2f})")
    print(f"  {'stream':<14}{'records':>10}{'seconds':>10}{'records/s':>12}{'pushed':>10}"
          f"{'accepted':>10}{'quarantined':>13}")
    for stream, n, secs, pushed, accepted, quarantined in run["streams"]:
        print(f"  {stream:<14}{n:>10}{secs:>10.1f}{n / secs if secs else 0:>12.0f}{pushed:>10}"
              f"{accepted:>10}{quarantined:>13}")
    print(f"  total: {records} records in {seconds:.1f}s = {records / seconds:.0f} records/s;"
          f" peak RSS of the syncing process {run['rss']:.0f} MiB")
    servers = ", ".join(f"{k} {v:.1f}" for k, v in run["servers"].items())
    print(f"  CPU seconds: syncing process {run['cpu']:.1f} (its syncing thread"
          f" {run['thread_cpu']:.1f}, other threads {run['cpu'] - run['thread_cpu']:.1f}),"
          f" {servers}")
    synced = sum(s[3] for s in run["streams"])
    if run.get("written") is not None:
        own, ended = run["written"]
        # the processes the run started: its read process, or a drop folder's parsing ones
        children = "read process" if "read process" in run["servers"] else "parsing processes"
        print(f"  written to storage: syncing process {own:.0f} MiB"
              f" ({own * 1024 / max(synced, 1):.1f} KiB an item pushed: the ledger's WAL and"
              f" checkpoints), {children} {ended:.0f} MiB")
    if run.get("prepared"):
        wall, cpu = run["prepared"]
        print(f"  great-expectations import and plans, in their thread: {wall:.1f}s wall,"
              f" {cpu:.1f} CPU s")
    if run["stages"] is not None and run.get("prepared"):
        # the quality stage is synchronous: no other task runs inside it, so its CPU is its own
        own = run["stages"]["quality"][1] + run["prepared"][1]
        print(f"  the quality checks' own CPU (their stage, and the import and plans):"
              f" {own:.1f} s, {own / all_cpu(run):.1%} of the {all_cpu(run):.1f} CPU s"
              " all processes spent")
    if run["stages"] is not None:
        elsewhere = run.get("elsewhere")
        print(f"  {'stage':<14}{'wall s':>9}{'share':>8}{'CPU s':>9}"
              + ("   (CPU: the syncing thread's, each task's steps in the stage it is in;"
                 " the ledger's worker thread with the ledger)" if elsewhere else
                 "   (CPU: the syncing thread's, the ledger's with its worker thread;"
                 " reads in worker threads count as other threads)"))
        staged = 0.0
        for stage, (wall, cpu) in run["stages"].items():
            staged += wall
            print(f"  {LABELS.get(stage, stage):<14}{wall:>9.1f}{wall / seconds:>8.1%}{cpu:>9.1f}")
        other = seconds - staged
        print(f"  {'other':<14}{other:>9.1f}{other / seconds:>8.1%}"
              f"{'':>9}  (the run's setup and end, a stream's work between stages)")
        if elsewhere:
            print(f"  {'':<14}{'':>9}{'':>8}{elsewhere['unstaged']:>9.1f}  (tasks outside"
                  " the stages: a chunk's grouping and bookkeeping between them, setup, deletions,"
                  " the probe, reports)")
            print(f"  {'':<14}{'':>9}{'':>8}{elsewhere['event loop']:>9.1f}  (the event"
                  " loop between tasks' steps: callbacks, sockets)")
    if run.get("read_stages"):
        read_stages = run["read_stages"]
        total = run["servers"].get("read process", 0.0)
        print(f"  {'read process':<14}{'':>9}{'':>8}{'CPU s':>9}   (its own stages, timed a page"
              f" at a time: {sum(read_stages.values()):.1f} of its {total:.1f} CPU s)")
        for stage, cpu in read_stages.items():
            print(f"  {stage:<14}{'':>9}{'':>8}{cpu:>9.1f}  ({READ_STAGE_LABELS.get(stage, '')})")
    rerun, read, pushed = run["rerun"]
    print(f"  unchanged rerun: {rerun:.1f}s ({rerun / seconds:.1%} of the full sync),"
          f" {read} records read, {pushed} items written")
    items, push_seconds, *push_cpu = run["push_only"]
    if items and push_seconds:
        rate = items / push_seconds
        print(f"  push-only: the {items} accepted items sent again in {push_seconds:.1f}s ="
              f" {rate:.0f} items/s; the sync pushed {synced} at {synced / seconds:.0f}"
              f" items/s = {synced / seconds / rate:.1%} of it")
    if items and len(push_cpu) == 2 and synced:
        # both runs are CPU-bound on the same cores: at equal use of them, the rates go as
        # the inverse of the CPU an item costs
        sync_each, push_each = all_cpu(run) / synced, sum(push_cpu) / items
        used = all_cpu(run) / seconds
        print(f"  CPU an item: the sync {sync_each * 1e6:.0f} µs (all processes, {used:.2f}"
              f" cores busy), the push-only {push_each * 1e6:.0f} µs (its pushes"
              f" {push_cpu[0] / items * 1e6:.0f}, the sandbox {push_cpu[1] / items * 1e6:.0f},"
              f" {sum(push_cpu) / push_seconds:.2f} cores busy): at equal use of the cores"
              f" the sync reaches {push_each / sync_each:.1%} of the push-only rate")
        reading = run["servers"].get("read process", 0.0)
        if reading and push_seconds:
            # a bound, not a forecast: what the sync's share would be on its cores if its
            # reading, mapping and prechecking cost no CPU at all
            rest = (all_cpu(run) - reading) / synced
            print(f"  without the read process's CPU ({reading / synced * 1e6:.0f} µs an item:"
                  f" reading, mapping, checking, encoding), the sync would cost"
                  f" {rest * 1e6:.0f} µs an item and reach"
                  f" {used / rest / (items / push_seconds):.1%} of the push-only rate on its"
                  f" {used:.2f} cores")


def baseline(checkout: str, args: argparse.Namespace) -> dict[str, Any]:
    """The same measure with the engine of ``checkout``, in a process of its own."""
    return apart(checkout, args, read_process=args.baseline_read_process,
                 without_quality=args.baseline_without_quality)


def apart(checkout: str, args: argparse.Namespace, *, read_process: bool,
          without_quality: bool = False) -> dict[str, Any]:
    """``measure`` with the engine of ``checkout``, in a process of its own: its peak RSS
    is its own, not the highest of the runs before it in this process."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = {**os.environ, "PYTHONPATH": checkout}
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--source", args.source, "--orders",
                        str(args.orders), "--customers", str(args.customers), "--products",
                        str(args.products), "--json", out.name,
                        *(["--read-process"] if read_process else []),
                        *(["--without-quality"] if without_quality else [])],
                       env=env, check=True, cwd=checkout)
        result: dict[str, Any] = json.loads(Path(out.name).read_text())
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", choices=SOURCES, default="woocommerce")
    parser.add_argument("--orders", type=int, default=100_000)
    parser.add_argument("--customers", type=int, default=2_000)
    parser.add_argument("--products", type=int, default=500)
    parser.add_argument("--baseline", metavar="DIR",
                        help="a checkout whose engine runs the same sync first, to compare")
    parser.add_argument("--read-process", action="store_true",
                        help="read and map in a process of their own (this checkout's run)")
    parser.add_argument("--baseline-read-process", action="store_true",
                        help="the baseline reads and maps in a process of its own too")
    parser.add_argument("--baseline-without-quality", action="store_true",
                        help="the baseline skips the quality checks")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="with --baseline: N pairs of runs, alternating, and the medians")
    parser.add_argument("--without-quality", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="FILE", help=argparse.SUPPRESS)  # for --baseline
    args = parser.parse_args()
    if args.without_quality:
        without_quality()
    pairs = []
    for _ in range(max(1, args.repeat) if args.baseline else 1):
        before = baseline(args.baseline, args) if args.baseline else None
        # the pairs after the first: in a process of their own, each with its own peak RSS
        run = (apart(str(Path(__file__).resolve().parents[1]), args,
                     read_process=args.read_process) if pairs and not args.json else
               measure(args.source, args.orders, args.customers, args.products,
                       read_process=args.read_process))
        if args.json:
            Path(args.json).write_text(json.dumps(run))
            return
        compare(before, run, args)
        pairs.append((before, run))
    if len(pairs) > 1:
        medians(pairs, args)


def compare(before: dict[str, Any] | None, run: dict[str, Any], args: argparse.Namespace) -> None:
    """The reports of one pair of runs, and how they compare."""
    if before is not None:
        report(before, f"baseline ({args.baseline}"
               f"{', without quality checks' if args.baseline_without_quality else ''})")
    report(run, "this checkout" + (", reading in a process" if args.read_process else ""))
    if before is not None:
        print(f"  ratio to the baseline: {before['seconds'] / run['seconds']:.2f}x faster,"
              f" syncing thread CPU {run['thread_cpu'] / before['thread_cpu']:.2f}x,"
              f" first stream {run['streams'][0][2]:.1f}s vs {before['streams'][0][2]:.1f}s")
        yardstick(before, run)
        if args.baseline_without_quality:
            added = run["seconds"] - before["seconds"]
            staged = (f" (the quality stage's share of the syncing thread's:"
                      f" {run['stages']['quality'][0] / run['seconds']:.1%})"
                      if run["stages"] else "")
            print(f"  the quality checks add {added:.1f}s to the sync:"
                  f" {added / run['seconds']:.1%} of its time{staged}; and"
                  f" {all_cpu(run) - all_cpu(before):.1f} CPU s across the processes:"
                  f" {(all_cpu(run) - all_cpu(before)) / all_cpu(run):.1%} of their CPU")


def engine_cpu(run: dict[str, Any]) -> float:
    """CPU seconds of the engine's processes: the syncing one, the read process, and a drop
    folder's processes parsing files apart."""
    return float(run["cpu"] + run["servers"].get("read process", 0.0)
                 + run["servers"].get("parsing processes", 0.0))


def engine_work(run: dict[str, Any]) -> float | None:
    """The engine's CPU per CPU second of the sandbox's (None: the sandbox's is unknown)."""
    sandbox = run["servers"]["sandbox"]
    return engine_cpu(run) / sandbox if sandbox else None


def yardstick(before: dict[str, Any], run: dict[str, Any]) -> None:
    """The engine's CPU against the sandbox's, in both runs: the sandbox takes the same
    requests in each, so its CPU measures how fast the machine ran, and a pair whose sandbox
    differs by 10 % is a pair the machine changed under (two busy cores shared with other
    work: measured at 15 % from one run to the next)."""
    sandbox = before["servers"]["sandbox"], run["servers"]["sandbox"]
    per = engine_work(before), engine_work(run)
    if per[0] is None or per[1] is None:
        return
    print(f"  the sandbox took the same requests in {sandbox[0]:.1f} and {sandbox[1]:.1f} CPU s"
          f" ({sandbox[1] / sandbox[0] - 1:+.0%} in this run: the machine's pace); the engine"
          f" spent {per[0]:.2f} and {per[1]:.2f} CPU s per CPU s of the sandbox's ="
          f" {per[0] / per[1]:.2f}x less work")


def medians(pairs: list[tuple[Any, dict[str, Any]]], args: argparse.Namespace) -> None:
    """Over pairs run one after the other: one run of a pair against the other varies less
    than runs an hour apart, so the pairs' median says more than any one pair."""
    def rate(run: dict[str, Any]) -> float:
        return sum(s[1] for s in run["streams"]) / run["seconds"]

    print(f"over {len(pairs)} pairs, alternating:")
    print(f"  records/s: baseline {', '.join(f'{rate(b):.0f}' for b, _ in pairs)} (median"
          f" {statistics.median(rate(b) for b, _ in pairs):.0f}); this checkout"
          f" {', '.join(f'{rate(r):.0f}' for _, r in pairs)} (median"
          f" {statistics.median(rate(r) for _, r in pairs):.0f})")
    ratios = [b["seconds"] / r["seconds"] for b, r in pairs]
    print(f"  ratio to the baseline: {', '.join(f'{x:.2f}x' for x in ratios)}; median"
          f" {statistics.median(ratios):.2f}x")
    work = [b / r for b, r in ((engine_work(b), engine_work(r)) for b, r in pairs)
            if b is not None and r is not None]
    if work:
        print(f"  the engine's work against the sandbox's: less by"
              f" {', '.join(f'{x:.2f}x' for x in work)}; median {statistics.median(work):.2f}x")
    if args.baseline_without_quality:
        shares = [(r["seconds"] - b["seconds"]) / r["seconds"] for b, r in pairs]
        print(f"  the quality checks add {', '.join(f'{x:.1%}' for x in shares)} of the"
              f" sync's time; median {statistics.median(shares):.1%}")
        spent = [(all_cpu(r) - all_cpu(b)) / all_cpu(r) for b, r in pairs]
        print(f"  and {', '.join(f'{x:.1%}' for x in spent)} of the CPU all processes spent;"
              f" median {statistics.median(spent):.1%}")


if __name__ == "__main__":
    main()
