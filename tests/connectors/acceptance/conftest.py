"""The connector acceptance suite's drivers: one ``driver_<platform>.py`` per platform in this
folder, each defining ``DRIVER``; every test of the suite runs against every driver.

A driver has ``platform``, ``stream`` (an incremental stream to exercise) and
``start(size=, empty=, rate_limit=, fault_rate=, page_size=, seed=)`` returning a handle with
``connector(bad_credentials=False, retry=None)``, ``ids()`` (every id of the stream the
connector must return, as its positions' ``record_id``) and ``stop()``. The fake must put
several records on one timestamp, so that ties cross page boundaries."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _drivers() -> list[object]:
    found = []
    for path in sorted(Path(__file__).parent.glob("driver_*.py")):
        spec = importlib.util.spec_from_file_location(f"acceptance_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        found.append(module.DRIVER)
    return found


DRIVERS = _drivers()


@pytest.fixture(params=DRIVERS, ids=[d.platform for d in DRIVERS])
def driver(request):
    return request.param
