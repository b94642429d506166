"""``shopsync dev`` as a real process on free ports, and a headless Chromium (Debian's, driven
by playwright) on its UI: one of each per test module, shared by its tests, which take turns
as a person would (see ``journey``). What a module leaves for a person to look at — its
screenshots, numbered in the order taken, and the output of ``shopsync dev`` (``dev.log``) —
goes to ``build/ui-screenshots/<module>/``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId
from playwright.sync_api import Browser, sync_playwright

from tests.ui.dev import START_BOUND, Dev, start_dev
from tests.ui.journey import Journey
from tests.ui.pages import CHROMIUM, DagsterUI, Screenshots

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "ui-screenshots"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--dist loadgroup`` on pytest 9.2: xdist 3.8 sends a group to one worker by adding
    ``@group`` to its tests' node ids, which pytest 9.2's structured node ids no longer take
    (pytest-dev/pytest-xdist#1386), so a module sharing one ``shopsync dev`` would be spread
    over the workers, each starting its own. The suffix is added here until xdist does it."""
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers
        return
    for item in items:
        group = item.get_closest_marker("xdist_group")
        if group is not None and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{group.args[0]}")


@pytest.fixture(scope="module")
def artifacts(request: pytest.FixtureRequest) -> Path:
    """The module's folder under ``build/ui-screenshots``, emptied."""
    folder = SCREENSHOTS / request.path.stem
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"\nscreenshots and dev.log: {folder}")
    return folder


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory, artifacts: Path) -> Iterator[Dev]:
    """``shopsync dev`` on free ports, with ``SHOPSYNC_HOME`` in a temporary folder and its
    schedules and sensors stopped (the runs are the tests' own), just started: ``ui`` waits
    for it; stopped (and, past its bound, killed) after the module."""
    running = start_dev(tmp_path_factory.mktemp("dev") / "home", artifacts / "dev.log")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def browser(dev: Dev) -> Iterator[Browser]:
    """Chromium, started while ``dev`` starts (after it, so it is closed first)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def ui(dev: Dev, browser: Browser, artifacts: Path) -> DagsterUI:
    """A page of ``browser`` on the UI of ``dev``, once it serves; the module's screenshots
    in its folder."""
    url = dev.wait_serving(timeout=START_BOUND)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    return DagsterUI(page, url, Screenshots(artifacts))


@pytest.fixture(scope="module")
def journey() -> Journey:
    """What the module's tests leave for the later ones (the runs they launched, what they
    read), so that each test checks one thing and none repeats another's run."""
    return Journey()
