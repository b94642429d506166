"""A source's pacing limits in shops.yaml: the push starts at ``concurrency`` and the writer
moves between ``min_concurrency`` and ``max_concurrency``, so the three must be in order."""

from __future__ import annotations

import pytest

from pipelines.engine.config import ConfigError, load_config
from tests.engine.config_support import GOOD, write


def with_tuning(tuning: str) -> str:
    return GOOD + f"    tuning: {tuning}\n"


def test_the_ceiling_defaults_to_a_safety_bound_above_the_start(tmp_path):
    tuning = load_config(write(tmp_path, GOOD)).sources[0].tuning
    assert (tuning.min_concurrency, tuning.concurrency, tuning.max_concurrency) == (1, 8, 64)
    tuning = load_config(write(tmp_path, with_tuning(
        "{min_concurrency: 2, concurrency: 4, max_concurrency: 4}"))).sources[0].tuning
    assert (tuning.min_concurrency, tuning.concurrency, tuning.max_concurrency) == (2, 4, 4)


@pytest.mark.parametrize(
    ("tuning", "expected"),
    [
        ("{concurrency: 16, max_concurrency: 8}",
         "sources[0].tuning: concurrency (16) is above max_concurrency (8): raise"
         " max_concurrency to at least 16 or lower concurrency"),
        ("{min_concurrency: 9}",
         "sources[0].tuning: min_concurrency (9) is above concurrency (8): lower"
         " min_concurrency to at most 8 or raise concurrency"),
        ("{max_concurrency: 0}", "sources[0].tuning.max_concurrency: Input should be greater"),
        ("{max_concurrency: 65}", "sources[0].tuning.max_concurrency: Input should be less"),
        ("{min_concurrency: 0}", "sources[0].tuning.min_concurrency: Input should be greater"),
    ],
    ids=["start-above-ceiling", "floor-above-start", "ceiling-zero", "ceiling-too-high",
         "floor-zero"],
)
def test_limits_out_of_order_name_the_field_and_the_fix(tmp_path, tuning, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, with_tuning(tuning)))
    assert any(p.startswith(expected) for p in caught.value.problems), caught.value.problems
