"""How the quality suites are run: prepared in the background, through a plan built once
that finds what ``batch.validate`` finds, a rule GX cannot evaluate holding nothing back,
and the packages the GX import shares whole before its thread starts.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_resources
from pipelines.engine.quality import check, check_items
from pipelines.engine.quality.frame import item_frame
from pipelines.engine.quality.plan import reference
from tests.engine.quality_support import KNOWN, faulty, keyed, valid


def test_suites_prepared_in_the_background_are_the_ones_the_checks_use() -> None:
    resources = sorted(SYNC_RESOURCES)
    preparing = check.prepare(resources)  # None: this process planned them already
    report = check_items("orders", keyed(valid("orders", 2)), known=KNOWN)  # meanwhile
    if preparing is not None:
        preparing.join(timeout=120)
        assert not preparing.is_alive()
    assert report.failures == {} and report.rows == 2
    plans = {r: check._compile(r, True) for r in resources}
    assert check.prepare(resources) is None  # again: nothing planned twice
    assert all(check._compile(r, True) is plans[r] for r in resources)


@pytest.mark.parametrize("resource", sample_resources())
@pytest.mark.parametrize("after_models", [False, True])
def test_the_planned_validation_finds_what_batch_validate_finds(resource: str,
                                                                after_models: bool) -> None:
    """The engine runs each suite through a plan built once (``plan.py``), not through
    ``batch.validate``: on the same frame, every rule must come out the same, pass or fail,
    with the same items, in both result formats."""
    compiled = check._compile(resource, after_models)
    assert compiled is not None
    frame = item_frame(compiled.suite, faulty(resource), KNOWN, compiled.columns)
    expectations = {name: rule.expectation for name, rule in compiled.rules.items()}
    for fmt in ("boolean", "complete"):
        planned = compiled.plan.run(frame, dict.fromkeys(compiled.rules, fmt))
        assert planned == reference(frame, expectations, fmt)
    assert any(finding.keys for finding in planned.values()) or not compiled.rules


def test_a_rule_gx_cannot_evaluate_holds_nothing_back_and_shows_its_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rule = "expect_column_pair_values_a_to_be_greater_than_b(updated_at, created_at)"
    frame_of = check.typed_frame

    def broken_frame(*args: Any, **kwargs: Any) -> Any:
        frame = frame_of(*args, **kwargs)
        if "updated_at" in frame:
            # no order with dates (on the frame's index: a Series is aligned to it)
            frame["updated_at"] = pd.Series(["many", 1.0], dtype=object, index=frame.index)
        return frame

    monkeypatch.setattr(check, "typed_frame", broken_frame)
    report = check_items("products", keyed(valid("products", 2)), after_models=True)

    assert report.failures == {} and report.warnings == {}
    (result,) = [r for r in report.results if r["name"] == rule]
    assert not result["success"] and result["unexpected_count"] == 0
    assert "not supported between" in result["error"]
    compiled = check._compile("products", True)
    assert compiled is not None
    frame = item_frame(compiled.suite, keyed(valid("products", 2)), None, compiled.columns)
    frame["updated_at"] = pd.Series(["many", 1.0], dtype=object, index=frame.index)
    assert reference(frame, {rule: compiled.rules[rule].expectation}, "complete")[rule].error \
        == result["error"]


#: run in a fresh interpreter: what is imported when ``prepare`` returns, before its thread ends
_FRESH_PREPARE = """
import sys
from pipelines.engine.quality.check import SHARED_WITH_GX, prepare
thread = prepare(["orders"])
whole = [name for name in SHARED_WITH_GX
         if name in sys.modules and not getattr(sys.modules[name].__spec__, "_initializing", False)]
import sqlalchemy.orm.exc
print(thread is not None, whole == list(SHARED_WITH_GX), hasattr(sqlalchemy.orm.exc, "UnmappedClassError"))
thread.join()
"""


def test_the_packages_the_gx_import_shares_are_whole_before_its_thread_starts():
    # other threads use them while GX imports in its own: half-imported, they fail there
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", _FRESH_PREPARE], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])

    assert done.stdout.split() == ["True", "True", "True"], done.stderr
