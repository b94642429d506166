"""What great-expectations imports and no rule of ours uses waits until something uses it,
and then works: in a fresh interpreter, as a run's first suite meets it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

_FRESH_SUITE = """
import math, sys
from pipelines.engine.quality.deferred import UNUSED_BY_OUR_SUITES
from tests.engine.quality_support import keyed, valid
from pipelines.engine.quality import check_items

report = check_items("orders", keyed(valid("orders", 3)))
print("checked", report.rows, not report.failures)
print("gx", "great_expectations" in sys.modules)
print("waiting", [type(sys.modules[n]).__name__ for n in UNUSED_BY_OUR_SUITES],
      "scipy.stats._stats_py" in sys.modules, "altair.vegalite" in sys.modules)

import great_expectations.expectations.core.expect_column_kl_divergence_to_be_less_than as kl
print("used", math.isclose(kl.stats.entropy([1, 1]), math.log(2)), kl.alt.Chart is not None)
print("now", [type(sys.modules[n]).__name__ for n in UNUSED_BY_OUR_SUITES])
"""


def test_gx_libraries_no_rule_uses_are_imported_when_first_used_not_with_gx() -> None:
    done = subprocess.run([sys.executable, "-c", _FRESH_SUITE], capture_output=True,
                          text=True, timeout=120, cwd=PROJECT)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["checked 3 True", "gx True",
                         "waiting ['_Deferred', '_Deferred'] False False"], done.stdout
    assert lines[3:] == ["used True True", "now ['module', 'module']"], done.stdout
