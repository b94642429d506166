"""``shopsync dev`` as a real process on free ports, and a headless Chromium (Debian's, driven
by playwright) on its UI. What a test leaves for a person to look at — its screenshots and
the output of ``shopsync dev`` (``dev.log``) — goes to ``build/ui-screenshots/<test name>/``."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.support import eventually
from tests.ui.dev import STOP_BOUND, Dev, alive, descendants
from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "ui-screenshots"
#: starting three servers and Dagster's four processes on a crowded machine
START_BOUND = 300.0


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """The test's folder under ``build/ui-screenshots``, emptied."""
    folder = SCREENSHOTS / re.sub(r"[^\w.-]", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"\nscreenshots and dev.log: {folder}")
    return folder


@pytest.fixture
def dev(tmp_path: Path, artifacts: Path) -> Iterator[Dev]:
    """``shopsync dev`` on free ports, with ``SHOPSYNC_HOME`` in ``tmp_path`` and its
    schedules and sensors stopped (the runs are the test's own), serving its UI when this
    returns; stopped (and, past its bound, killed) afterwards."""
    env = {**os.environ, "SHOPSYNC_HOME": str(tmp_path / "home")}
    for name in ("SHOPSYNC_CONFIG", "DAGSTER_HOME"):
        env.pop(name, None)
    log = artifacts / "dev.log"
    with log.open("wb") as out:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "dev", "--port", "0", "--sandbox-port", "0",
             "--shop-port", "0", "--no-automation"],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
        )
    running = Dev(process, log, started)

    def serving() -> str | None:
        assert process.poll() is None, f"shopsync dev exited:\n{running.output()}"
        found = re.search(r"^Dagster UI at (http://\S+)", running.output(), re.MULTILINE)
        return found.group(1) if found else None

    try:
        running.url = eventually(serving, "shopsync dev serving its UI", timeout=START_BOUND)
        yield running
    finally:
        if process.poll() is None:
            below = descendants(process.pid)
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=STOP_BOUND)
            except subprocess.TimeoutExpired:
                for pid in alive(below | {process.pid}):
                    os.kill(pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def ui(dev: Dev, artifacts: Path) -> Iterator[DagsterUI]:
    """Chromium on the UI of ``dev``; the test's screenshots in its folder."""
    shots = Screenshots(artifacts)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            yield DagsterUI(page, dev.url, shots)
        finally:
            browser.close()
