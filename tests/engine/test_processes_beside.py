"""Reading and mapping, and judging quality, in processes of their own
(``tuning.read_process``, ``tuning.quality_process``): a run that does sends, quarantines,
records and reports what a run doing it all in its own process does, raises what the source
raises, and leaves no reading process behind; the suite process judges as GX does in
process, and one that dies is replaced. The sources read with no HTTP (a database, a drop
folder) are what a second process can open on its own here; the fake HTTP shops of this
suite run inside the test's process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pipelines.engine.quality import check_items, summarize
from pipelines.engine.quality.beside import SuiteProcess
from pipelines.engine.quality.check import framed, reported
from tests.engine.drivers.base import ROUTES, Driver
from tests.engine.drivers.files import Files
from tests.engine.drivers.sql import Sql
from tests.engine.support import EngineSetup, MakeSetup, assert_stored_as_mapped

DRIVERS = [Files(), Sql()]


def beside(setup: EngineSetup) -> EngineSetup:
    source = setup.config.sources[0]
    tuning = source.tuning.model_copy(update={"read_process": True, "quality_process": True})
    setup.config = setup.config.model_copy(
        update={"sources": [source.model_copy(update={"tuning": tuning})]})
    return setup


def readers() -> list[int]:
    """This process's children reading a source (Linux ``/proc``)."""
    found = []
    for folder in Path("/proc").iterdir():
        try:
            parent = int((folder / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (folder / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"pipelines.engine.read_process" in command:
            found.append(int(folder.name))
    return found


def counts(setup: EngineSetup) -> dict[str, Any]:
    """Per stream: records read, counts by resource, and the quality suites' summaries."""
    return {r.stream: (r.records, r.counts, {
        resource: {k: v for k, v in summarize(reports).items() if k != "seconds"}
        for resource, reports in r.quality.items()}) for r in setup.run()}


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.platform)
def test_a_sync_with_processes_beside_does_what_one_in_its_own_process_does(
    driver: Driver, engine_setup: MakeSetup, tmp_path: Path
) -> None:
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    inline = driver.start(engine_setup, tmp_path / "inline")
    apart = beside(driver.start(engine_setup, tmp_path / "apart"))

    assert counts(apart) == counts(inline)
    for resource, stream in driver.compared.items():
        expected = driver.expected(apart, stream)[resource]
        assert_stored_as_mapped(apart.stored(resource, ROUTES[resource]), expected, resource,
                                ignore=driver.ignore)
    assert sorted((e.key, e.status, e.errors) for e in apart.state.entries(driver.source,
                                                                           "orders")) == \
        sorted((e.key, e.status, e.errors) for e in inline.state.entries(driver.source,
                                                                         "orders"))
    assert all(pushed == 0 for _, by_resource, _ in counts(apart).values()
               for pushed in (c.get("pushed", 0) for c in by_resource.values()))
    assert readers() == []


def test_what_the_source_raises_in_the_process_the_run_raises(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    setups = [Sql().start(engine_setup, tmp_path / "inline"),
              beside(Sql().start(engine_setup, tmp_path / "apart"))]
    raised = []
    for setup in setups:
        (tmp_path / ("inline" if setup is setups[0] else "apart") / "shop.db").write_bytes(
            b"not a database" * 100)
        with pytest.raises(Exception) as caught:
            setup.run()
        raised.append((type(caught.value), str(caught.value)))

    assert raised[1] == raised[0]
    assert readers() == []


ORDERS = [
    ("1", {"order_id": "1", "lang": "en", "currency": "EUR", "amount": 10.0,
           "customer": {"email": "a@example.com"}, "created_at": "2025-01-02T03:04:05Z",
           "products": [{"product_id": "7", "price": 5}]}),
    ("2", {"order_id": "2", "lang": "english", "currency": "euro", "amount": -1,
           "customer": {"email": "not an address"}, "created_at": "yesterday",
           "products": [{"product_id": "8", "price": "x"}, "a line that is no object"]}),
    ("3", {"order_id": "3", "lang": None, "currency": "", "amount": 2**70,
           "customer": None, "created_at": "2025-02-30T00:00:00Z", "products": None}),
]


def test_the_suite_process_judges_as_great_expectations_does_in_process() -> None:
    suites = SuiteProcess()
    try:
        for known in ({"products": {"7"}}, None):
            here = check_items("orders", ORDERS, known=known, after_models=True)
            batch = framed("orders", ORDERS, suites.described("orders"), known)
            assert batch is not None
            there = reported(batch, suites.judge(batch))

            assert (there.failures, there.warnings, there.results) == \
                (here.failures, here.warnings, here.results)
            assert there.failures  # the odd orders break rules
    finally:
        suites.stop()


def test_a_suite_process_that_died_is_replaced() -> None:
    suites = SuiteProcess()
    try:
        batch = framed("orders", ORDERS, suites.described("orders"), None)
        assert batch is not None
        first = suites.judge(batch)
        assert suites.pid is not None
        os.kill(suites.pid, 9)

        with pytest.raises(RuntimeError, match="quality process ended"):
            suites.judge(batch)
        again = framed("orders", ORDERS, suites.described("orders"), None)
        assert again is not None
        assert suites.judge(again) == first
    finally:
        suites.stop()
