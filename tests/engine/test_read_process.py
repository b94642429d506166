"""Reading and mapping in a process of its own (``tuning.read_process``): a run that does
sends, quarantines, records and reports what a run reading in its own process does, raises
what the source raises, and leaves no process behind. The sources read with no HTTP (a
database, a drop folder) are what a second process can open on its own here; the fake HTTP
shops of this suite run inside the test's process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.engine.drivers.base import ROUTES, Driver
from tests.engine.drivers.files import Files
from tests.engine.drivers.sql import Sql
from tests.engine.support import EngineSetup, MakeSetup, assert_stored_as_mapped

DRIVERS = [Files(), Sql()]


def reading_in_a_process(setup: EngineSetup) -> EngineSetup:
    source = setup.config.sources[0]
    tuning = source.tuning.model_copy(update={"read_process": True})
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


def counts(setup: EngineSetup) -> dict[str, tuple[int, dict[str, dict[str, int]]]]:
    return {r.stream: (r.records, r.counts) for r in setup.run()}


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.platform)
def test_a_sync_reading_in_a_process_does_what_one_reading_in_its_own_does(
    driver: Driver, engine_setup: MakeSetup, tmp_path: Path
) -> None:
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    inline = driver.start(engine_setup, tmp_path / "inline")
    apart = reading_in_a_process(driver.start(engine_setup, tmp_path / "apart"))

    assert counts(apart) == counts(inline)
    for resource, stream in driver.compared.items():
        expected = driver.expected(apart, stream)[resource]
        assert_stored_as_mapped(apart.stored(resource, ROUTES[resource]), expected, resource,
                                ignore=driver.ignore)
    assert sorted((e.key, e.status, e.errors) for e in apart.state.entries(driver.source,
                                                                           "orders")) == \
        sorted((e.key, e.status, e.errors) for e in inline.state.entries(driver.source,
                                                                         "orders"))
    assert all(pushed == 0 for _, by_resource in counts(apart).values()
               for pushed in (c.get("pushed", 0) for c in by_resource.values()))
    assert readers() == []


def test_what_the_source_raises_in_the_process_the_run_raises(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    setups = [Sql().start(engine_setup, tmp_path / "inline"),
              reading_in_a_process(Sql().start(engine_setup, tmp_path / "apart"))]
    raised = []
    for setup in setups:
        (tmp_path / ("inline" if setup is setups[0] else "apart") / "shop.db").write_bytes(
            b"not a database" * 100)
        with pytest.raises(Exception) as caught:
            setup.run()
        raised.append((type(caught.value), str(caught.value)))

    assert raised[1] == raised[0]
    assert readers() == []
