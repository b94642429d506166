"""What the tests of one browser module hand on to each other: they share one ``shopsync dev``
and take turns on it, so a later test reads the runs an earlier one launched (and what it
read of them) instead of launching its own. A test whose earlier one failed or did not run
fails at once, naming what it misses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import pytest

from tests.ui.pages import Launch

T = TypeVar("T")


@dataclass
class Journey:
    """Each field is left by the test that established it; None until then."""

    sync: Launch | None = None
    #: what the orders asset said the sync did: ``{"extracted": 199, "accepted": …}``
    orders_run: dict[str, int] | None = None
    #: the orders' ``cursor (stored)`` after the sync
    stored_cursor: str | None = None
    backfill: Launch | None = None
    #: the sync whose orders' listing the shop refused
    failed: Launch | None = None


def needs(value: T | None, what: str, by: str) -> T:
    """``value``, which the test ``by`` establishes; fails the asking test when it is missing
    (``by`` failed, or this test runs without it): run the module whole, in order."""
    if value is None:
        pytest.fail(f"this test needs {what} from {by}, which failed or did not run before it"
                    " (run the module whole, in order)", pytrace=False)
    return value
