"""`shopsync sync` stopped from outside, as an operator meets it: the destination dies, Ctrl-C,
or the process is killed. Each ends with one message (or, killed, is marked at the next run)
and a rerun completes. The command runs as its own process, since the process's exit code,
output and death are the subject; its progress lines tell the test when a chunk of orders
was recorded."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pipelines.engine.state import StateStore
from sandbox.marketing.settings import DEFAULT_KEY
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.support import RunningSandbox, eventually, shopsync_here

#: a progress line saying a chunk of orders was recorded with accepted items
ORDERS_ACCEPTED = re.compile(r"woo/orders: \d+ records read, \d+ pushed, [1-9]\d* accepted")
#: a bound far above the time each stop takes, so only a hang fails
BOUND = 60.0


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "400", "--customers", "10", "--products", "6",
                              "--seed", "3")
    yield running
    running.stop()


class Operator:
    """A shops.yaml for one WooCommerce source, `shopsync` run against it, and its state."""

    def __init__(self, shop: RunningFakeShop, tmp_path: Path) -> None:
        self.shop = shop
        self.tmp_path = tmp_path
        self.config = tmp_path / "shops.yaml"
        self.state_url = f"sqlite:///{tmp_path / 'state.db'}"
        self.env = {**os.environ, "SHOPSYNC_CONFIG": str(self.config), "T_API_KEY": DEFAULT_KEY,
                    "T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret,
                    "PYTHONFAULTHANDLER": "1"}

    def destination(self, sandbox: RunningSandbox, down_after: float = 60,
                    chunk_items: int = 20) -> None:
        """Small chunks for the run a test stops (it stops between two of them); a rerun,
        whose chunking is not the subject, takes ``chunk_items=1000``."""
        self.config.write_text(f"""
destination: {{base_url: "{sandbox.base_url}", api_key_env: T_API_KEY,
               down_after_seconds: {down_after}}}
state_url: {self.state_url}
sources:
  - name: woo
    platform: woocommerce
    connection: {{url: "{self.shop.root}", key_env: T_WC_KEY, secret_env: T_WC_SECRET}}
    lookback_seconds: 0
    tuning: {{chunk_items: {chunk_items}, page_size: 20}}
""")

    def start_sync(self, *args: str) -> tuple[subprocess.Popen[str], Path]:
        """`shopsync sync` in a process of its own; its stderr goes to the file returned."""
        err = self.tmp_path / f"sync-{time.monotonic_ns()}.err"
        with err.open("w") as stderr:
            process = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "sync", *args],
                                       env=self.env, text=True, stdout=subprocess.DEVNULL,
                                       stderr=stderr)
        return process, err

    def here(self, *args: str) -> tuple[int, str, str]:
        """The same command in this process (a step a test arranges with or reads back):
        its exit code, stdout and stderr."""
        done = shopsync_here(*args, env=self.env)
        return done.returncode, done.stdout, done.stderr

    def runs(self) -> list[tuple[str | None, str]]:
        with StateStore(self.state_url) as state:
            return [(r.resource, r.status) for r in state.recent_runs("woo", limit=50)]


@pytest.fixture
def operator(shop, tmp_path) -> Operator:
    return Operator(shop, tmp_path)


def wait_for_orders_accepted(err: Path, process: subprocess.Popen[str]) -> None:
    eventually(lambda: ORDERS_ACCEPTED.search(err.read_text()) or process.poll() is not None,
               "a chunk of orders accepted", timeout=BOUND)
    assert process.poll() is None, f"the sync ended before the test could stop it:\n{err.read_text()}"


def ended(process: subprocess.Popen[str], err: Path) -> tuple[int, str]:
    try:
        code = process.wait(timeout=BOUND)
    except subprocess.TimeoutExpired:
        # a hang: the command's faulthandler writes where every thread is to its stderr
        process.send_signal(signal.SIGABRT)
        process.wait(timeout=BOUND)
        pytest.fail(f"`shopsync sync` did not end within {BOUND:.0f} s:\n{err.read_text()}")
    return code, err.read_text()


def test_a_dead_destination_ends_the_sync_with_one_message_and_exit_75(
    operator, start: Callable[..., RunningSandbox]
):
    data = str(operator.tmp_path / "destination.sqlite")
    destination = start("--data", data, "--visibility-delay", "0", own_process=True)
    operator.destination(destination, down_after=2)
    process, err = operator.start_sync()
    wait_for_orders_accepted(err, process)

    assert isinstance(destination.process, subprocess.Popen)
    destination.process.kill()
    died = time.monotonic()
    code, output = ended(process, err)
    stopped_after = time.monotonic() - died

    print(f"\ndestination killed -> `shopsync sync` exited: {stopped_after:.2f} s"
          " (down_after_seconds=2)")
    assert code == 75, output
    assert output.count("error: destination down: ") == 1
    assert "nothing is lost" in output and "; orders after " in output
    assert "Traceback" not in output and "retrying after" not in output
    assert stopped_after < BOUND

    back = start("--data", data, "--visibility-delay", "0")  # the same data, served again
    operator.destination(back, chunk_items=1000)
    code, _, output = operator.here("sync")
    assert code == 0, output


def stalled_sync(operator: Operator, start: Callable[..., RunningSandbox]
                 ) -> tuple[subprocess.Popen[str], Path, str]:
    """A `shopsync sync` certain to be in the middle of its run: a chunk of orders was
    recorded, then its destination (a process keeping its data in a file) died, and the sync
    waits for it for ``down_after_seconds`` (60) — however fast or slow the machine is."""
    data = str(operator.tmp_path / "destination.sqlite")
    destination = start("--data", data, "--visibility-delay", "0", own_process=True)
    operator.destination(destination)
    process, err = operator.start_sync()
    wait_for_orders_accepted(err, process)
    assert isinstance(destination.process, subprocess.Popen)
    destination.process.kill()
    return process, err, data


def test_ctrl_c_ends_the_sync_with_one_message_and_exit_130(operator, start):
    process, err, data = stalled_sync(operator, start)

    process.send_signal(signal.SIGINT)
    code, output = ended(process, err)

    assert code == 130, output
    assert "interrupted: Ctrl-C." in output
    assert "nothing is lost" in output and "; orders after " in output
    assert "Traceback" not in output and "Aborted!" not in output
    assert ("orders", "interrupted") in operator.runs()
    operator.destination(start("--data", data, "--visibility-delay", "0"), chunk_items=1000)
    code, _, output = operator.here("sync")
    assert code == 0, output


def test_a_killed_sync_is_shown_interrupted_once_the_next_run_starts(operator, start):
    process, _, data = stalled_sync(operator, start)

    process.kill()
    process.wait(timeout=BOUND)
    assert ("orders", "running") in operator.runs(), "nobody could say how it ended"
    operator.destination(start("--data", data, "--visibility-delay", "0"), chunk_items=1000)
    code, _, output = operator.here("sync", "--stream", "orders")

    assert code == 0, output
    code, shown, _ = operator.here("status", "--json")
    runs = json.loads(shown)["woo"]["runs"]
    assert [r["status"] for r in runs if r["stream"] == "orders"] == ["succeeded", "interrupted"]
    code, text, _ = operator.here("status")
    assert code == 0
    assert any(line.split()[-2:] == ["orders", "interrupted"] for line in text.splitlines()), text
