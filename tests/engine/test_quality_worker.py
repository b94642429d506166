"""The quality suites run in a worker process: the syncing process never imports
great-expectations, a worker that dies is replaced, one that keeps dying stops the sync with
one message (no item is blamed for it), and the worker never outlives its process.

The cases share this process's worker, as a process's syncs do; the first starts a syncing
process of its own (a fresh interpreter), to see what that one imports and outlives."""

from __future__ import annotations

import asyncio
import json
import multiprocessing.queues
import multiprocessing.spawn
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from connectors.marketing.samples import sample_item
from pipelines.engine.config import parse_config
from pipelines.engine.quality import QualityUnavailable, check_items, worker
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
from pipelines.engine.stopped import SyncStopped
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.engine.support import MovableClock
from tests.support import RunningSandbox, eventually

ROOT = Path(__file__).resolve().parents[2]
#: far above what a fresh interpreter, a worker's start and the great-expectations import
#: take on a busy machine: only a hang fails
BOUND = 180


def orders(*emails: str) -> list[tuple[str, dict[str, object]]]:
    return [(f"o{i}", sample_item("orders", id_order=f"o{i}", email=email))
            for i, email in enumerate(emails)]


def worker_pid() -> int:
    return int(worker._worker().submit(os.getpid).result())


def alive(pid: int) -> bool:
    """Running, not a zombie (a zombie's parent is gone or has yet to reap it)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


#: a syncing process that ends without any clean-up (os._exit: as if killed)
_FRESH = """
import json, os, sys
from connectors.marketing.samples import sample_item
from pipelines.engine.quality import check_items, prepare, worker
prepare(["orders", "customers"])
report = check_items("orders", [("o1", sample_item("orders", email="not-an-email"))])
print(json.dumps({"gx_here": "great_expectations" in sys.modules, "rows": report.rows,
                  "worker": worker._worker().submit(os.getpid).result()}), flush=True)
os._exit(0)
"""


def test_the_syncing_process_never_imports_gx_and_its_worker_ends_with_it() -> None:
    done = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True,
                          timeout=BOUND, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])

    assert answer["gx_here"] is False and answer["rows"] == 1
    eventually(lambda: not alive(answer["worker"]), "the orphaned worker's exit",
               timeout=BOUND)


def _start_a_worker(pids: multiprocessing.queues.Queue[int]) -> None:
    pids.put(worker_pid())


def test_a_process_that_is_a_multiprocessing_child_ends_and_its_worker_with_it() -> None:
    # Dagster's run worker is one: it ends through multiprocessing's exit, which joins its
    # children, not through the interpreter's, where the executor would be shut down
    spawn = multiprocessing.get_context("spawn")
    pids: multiprocessing.queues.Queue[int] = spawn.Queue()
    child = spawn.Process(target=_start_a_worker, args=(pids,))
    child.start()
    quality_worker = pids.get(timeout=BOUND)
    child.join(timeout=BOUND)

    assert child.exitcode == 0
    assert not alive(quality_worker)


def test_a_worker_killed_between_chunks_is_replaced_and_the_next_chunk_is_checked() -> None:
    first = check_items("orders", orders("a@example.com"))
    killed = worker_pid()
    os.kill(killed, signal.SIGKILL)
    second = check_items("orders", orders("b@example.com", "c@example.com"))

    assert (first.rows, second.rows) == (1, 2)
    assert worker_pid() != killed


def test_ctrl_c_reaches_the_syncing_process_not_the_worker() -> None:
    check_items("orders", orders("a@example.com"))
    pid = worker_pid()
    os.kill(pid, signal.SIGINT)

    assert check_items("orders", orders("b@example.com")).rows == 1
    assert worker_pid() == pid


class _EndsTheWorker:
    """An item value that ends the worker's process when it arrives there (unpickling it
    calls ``os._exit``): the worker dies on every try of that chunk."""

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (os._exit, (9,))


def test_a_worker_that_dies_on_every_try_stops_the_checks_with_one_message() -> None:
    with pytest.raises(QualityUnavailable, match="quality checks of orders stopped twice"):
        check_items("orders", [("o1", {"id_order": "o1", "odd": _EndsTheWorker()})])

    assert check_items("orders", orders("a@example.com")).rows == 1  # a later call starts afresh


def test_a_sync_whose_checks_cannot_run_stops_with_one_message_and_blames_no_item(
        sandbox: RunningSandbox, tmp_path: Path, fresh_key: Callable[[], str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    shop = start_in_thread("--orders", "12", "--customers", "4", "--products", "3",
                           "--seed", "7")
    state = StateStore(f"sqlite:///{tmp_path / 'state.db'}")
    config = parse_config({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_API_KEY"},
        "sources": [{"name": "woo", "platform": "woocommerce", "lookback_seconds": 0,
                     "connection": {"url": shop.root, "key_env": "T_WC_KEY",
                                    "secret_env": "T_WC_SECRET"},
                     "data_source": {"label": "checks down"}}],
    })
    env = {"T_API_KEY": fresh_key(), "T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret}
    runner = SourceRunner(config, config.sources[0], state, env, MovableClock())
    worker.stop()
    # the worker's interpreter cannot run: every worker this sync starts exits at once
    monkeypatch.setattr(multiprocessing.spawn, "_python_exe", os.fsencode(shutil.which("false") or "/bin/false"))
    try:
        with pytest.raises(SyncStopped) as stopped:
            asyncio.run(runner.run())
        counts = state.counts("woo")
    finally:
        worker.stop()
        state.close()
        shop.stop()

    assert stopped.value.why == "quality checks unavailable"
    assert "stopped twice" in stopped.value.message and "nothing is lost" in stopped.value.message
    assert not any("quarantined" in by_status for by_status in counts.values())
