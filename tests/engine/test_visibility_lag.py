"""The visibility lag is the time from acceptance to first seen, known only as well as the
read-backs allow: between the last read-back that did not show an item and the first that
did. The time to confirmation (acceptance to reconciliation's confirmation) is its own figure.

The sandbox shows writes ``DELAY`` seconds after accepting them, on a clock that stands still
until a test moves it (``--manual-clock``); the runner's clock is moved with it, so the
read-backs happen at known times. Times the engine takes itself are bracketed by the clock
read before and after the step that takes them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from pipelines.engine.lag import describe_lag
from pipelines.engine.probe import PROBE_FIRST
from pipelines.engine.reconcile import ReconcileReport
from pipelines.engine.report import summarize
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.trace import item_story
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.support import woo_runner
from tests.support import eventually

SOURCE = "woo"
DELAY = 60  # seconds on the sandbox's clock
STATUSES = 8  # the fake shop's order statuses: one chunk, accepted at one moment


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "5", "--customers", "3", "--products", "2")
    yield running
    running.stop()




def reconcile_timed(runner: SourceRunner) -> tuple[datetime, ReconcileReport, datetime]:
    """A reconciliation, with the runner's clock just before and just after it."""
    before = runner.clock()
    report = asyncio.run(runner.reconcile(deadline_seconds=600))
    return before, report, runner.clock()


def seconds(since: datetime, until: datetime) -> float:
    return (until - since).total_seconds()


def within(value: float, low: float, high: float) -> bool:
    return low - 0.001 <= value <= high + 0.001  # the figures are rounded to milliseconds


def accepted_at(runner: SourceRunner) -> datetime:
    (moment,) = {e.accepted_at for e in runner.state.entries(SOURCE, "statuses")}
    assert moment is not None
    return moment


@pytest.mark.parametrize(("missed_after", "finely"), [(20, False), (50, True)],
                         ids=["read-backs-far-apart", "read-backs-close"])
def test_the_lag_lies_between_the_read_back_that_missed_the_item_and_the_one_that_showed_it(
    start, shop, tmp_path, missed_after, finely
):
    sandbox = start("--visibility-delay", str(DELAY), "--manual-clock")
    runner = woo_runner(sandbox, shop, f"sqlite:///{tmp_path}/s.db")
    asyncio.run(runner.run(streams=["statuses"]))
    accepted = accepted_at(runner)
    assert all(e.unseen_at is None and e.visible_at is None  # no probe unless configured
               for e in runner.state.entries(SOURCE, "statuses"))

    runner.clock.advance(timedelta(seconds=missed_after))
    missed_from, early, missed_until = reconcile_timed(runner)
    sandbox.advance_clock(DELAY)
    runner.clock.advance(timedelta(seconds=DELAY - missed_after))
    seen_from, late, seen_until = reconcile_timed(runner)

    assert early.resources["statuses"].waiting == STATUSES
    assert "visibility_lag_p95" not in early.totals()  # nothing confirmed: no figure
    check = late.resources["statuses"]
    assert check.visible == len(check.lags) == STATUSES
    for lag in check.lags:
        assert within(lag.low, seconds(accepted, missed_from), seconds(accepted, missed_until))
        assert within(lag.high, seconds(accepted, seen_from), seconds(accepted, seen_until))
        assert within(lag.resolution, seconds(missed_until, seen_from),
                      seconds(missed_from, seen_until))
        assert lag.measured_finely is finely
    for waited in check.confirmations:  # confirmed by the same read-back that first saw them
        assert within(waited, seconds(accepted, seen_from), seconds(accepted, seen_until))
    summary = check.lag()
    assert summary["p95"] == max(lag.high for lag in check.lags)
    assert summary["measured_finely"] is finely
    text = describe_lag(summary["p95"], summary["resolution"])
    assert text.startswith(f"≤ {summary['p95']:.1f} s (resolution ")
    assert ("not measured finely" in text) is not finely
    totals = late.totals()
    assert totals["visibility_lag_p95"] == summary["p95"]
    assert totals["visibility_lag_measured_finely"] is finely
    assert totals["time_to_confirmation_p95"] == check.time_to_confirmation()["p95"]
    assert not any(name.startswith("lag_") for name in totals)


def test_the_status_page_shows_the_lag_with_its_resolution_and_the_time_to_confirmation_apart(
    start, shop, tmp_path
):
    sandbox = start("--visibility-delay", str(DELAY), "--manual-clock")
    runner = woo_runner(sandbox, shop, f"sqlite:///{tmp_path}/s.db")
    asyncio.run(runner.run(streams=["statuses"]))
    sandbox.advance_clock(DELAY)
    runner.clock.advance(timedelta(seconds=DELAY))
    (_, report, _) = reconcile_timed(runner)
    totals = report.totals()

    markdown = summarize(runner.state, SOURCE).markdown()

    lag = describe_lag(totals["visibility_lag_p95"], totals["visibility_lag_resolution"])
    assert "not measured finely" in lag  # one read-back, a minute after acceptance
    lines = {line.split(":")[0]: line for line in markdown.splitlines()}
    assert lines["- visibility lag p95 (s, acceptance → first seen)"].endswith(f"now {lag}")
    assert lines["- time to confirmation p95 (s, acceptance → confirmed here)"].endswith(
        f"now {totals['time_to_confirmation_p95']:.1f} s")


def test_a_sync_that_probes_what_it_sent_records_when_it_was_first_seen(start, shop, tmp_path):
    sandbox = start("--visibility-delay", str(DELAY), "--manual-clock")
    url = f"sqlite:///{tmp_path}/s.db"
    runner = woo_runner(sandbox, shop, url, tuning={"probe_seconds": 10})
    watcher, failed = StateStore(url), []

    def show_them_once_a_probe_missed_them() -> None:
        try:
            eventually(lambda: any(e.unseen_at for e in watcher.entries(SOURCE, "statuses")),
                       "a probe's read-back that did not show them", timeout=30)
            sandbox.advance_clock(DELAY)
        except BaseException as exc:  # noqa: BLE001 - reported by the test's thread
            failed.append(exc)

    helper = threading.Thread(target=show_them_once_a_probe_missed_them)
    helper.start()
    asyncio.run(runner.run(streams=["statuses"]))
    synced = runner.clock()
    helper.join()
    watcher.close()
    assert not failed, failed
    accepted = accepted_at(runner)
    probed = runner.state.entries(SOURCE, "statuses")
    runner.clock.advance(timedelta(seconds=100))  # reconciliation runs much later
    (before, report, _) = reconcile_timed(runner)

    assert all(e.status is ItemStatus.ACCEPTED for e in probed)  # confirming is reconcile's
    assert all(e.visible_at is not None and e.visible_at <= synced for e in probed)
    check = report.resources["statuses"]
    assert check.visible == STATUSES
    for lag in check.lags:  # from the probe's read-backs, not from reconciliation's
        assert PROBE_FIRST <= lag.low < lag.high <= seconds(accepted, synced)
    assert all(waited >= seconds(accepted, before) >= 100 for waited in check.confirmations)
    story = item_story(runner.state, SOURCE, "statuses", probed[0].key)
    assert [(e.kind, e.run_kind) for e in story] == [
        ("accepted", "sync"), ("seen", "sync"), ("visible", "reconcile")]
    assert story[1].summary.startswith(
        "seen at the destination, first time (a read-back right after the sync): visibility"
        " lag ")
    assert "(by the sync's read-back)" in story[2].summary
