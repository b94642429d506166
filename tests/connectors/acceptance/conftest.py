"""The connector acceptance suite's drivers: one ``driver_<platform>.py`` per platform in this
folder, each defining ``DRIVER``; every test of the suite runs against every driver.

A driver has ``platform``, ``stream`` (an incremental stream to exercise) and
``start(size=, empty=, rate_limit=, fault_rate=, page_size=, seed=)`` returning a handle with
``connector(bad_credentials=False, retry=None, requests_per_second=None)``, ``ids()`` (every
id of the stream the connector must return, as its positions' ``record_id``), ``requests()``
and ``throttled()`` (the API requests the fake answered so far, and those its limit refused),
``drain()`` (spends the limit: the next request is refused, however late it comes),
``deletable`` (the streams whose records can be deleted at the source, each to the fake's
resource holding them), ``delete(stream, record_id)`` (deletes one for good, as the shop's
admin would) and ``stop()``. The fake must put several records on one timestamp, so that ties cross page
boundaries. A driver may declare
``not_applicable = {"throttling" | "pacing" | "server_errors" | "bad_credentials" | "deletions":
"why"}`` for a kind of
source where a case means nothing (a file drop has no credentials)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.support import applicable


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test takes every driver its case applies to (``tests.support.applicable``)."""
    if "driver" not in metafunc.fixturenames:
        return
    drivers = applicable(DRIVERS, metafunc)
    metafunc.parametrize("driver", drivers, ids=[d.platform for d in drivers])
