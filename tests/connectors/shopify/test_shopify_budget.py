"""The Shopify cost budget as arithmetic, on the test's clock: what it estimates is left in
the bucket, and how long a query must wait for it. The connector's tests check, against the
fake shop, that a read kept within it is never throttled."""

from __future__ import annotations

import pytest

from connectors.sources.shopify.throttle import CostBudget


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def answered(available: float, *, requested: int | None = None,
             actual: int | None = None) -> dict[str, object]:
    """An answer's ``extensions.cost`` from a bucket of 1000 points refilled at 50 a second."""
    return {"requestedQueryCost": requested, "actualQueryCost": actual,
            "throttleStatus": {"maximumAvailable": 1000.0, "currentlyAvailable": available,
                               "restoreRate": 50.0}}


def test_until_an_answer_says_nothing_is_known_and_nothing_waits() -> None:
    budget = CostBudget(clock=Clock())
    assert budget.level() is None
    assert budget.wait_for(5000) == 0.0


def test_the_level_refills_at_the_restore_rate_up_to_the_maximum() -> None:
    clock = Clock()
    budget = CostBudget(clock=clock)
    budget.update(answered(100))
    assert budget.level() == 100
    clock.now += 2
    assert budget.level() == 200
    clock.now += 3600
    assert budget.level() == 1000


def test_a_query_waits_for_exactly_the_points_it_lacks() -> None:
    clock = Clock()
    budget = CostBudget(clock=clock)
    budget.update(answered(100))
    assert budget.wait_for(100) == 0.0
    assert budget.wait_for(350) == 5.0  # 250 points at 50 a second
    clock.now += 5
    assert budget.wait_for(350) == 0.0


def test_a_reserved_query_makes_the_next_one_wait() -> None:
    """Concurrent queries of one process wait for each other instead of being throttled."""
    budget = CostBudget(clock=Clock())
    budget.update(answered(600))
    budget.reserve(400)
    assert budget.level() == 200
    assert budget.wait_for(400) == 4.0


def test_an_answer_replaces_the_estimate_and_counts_the_cost() -> None:
    clock = Clock()
    budget = CostBudget(clock=clock)
    budget.update(answered(900, requested=120, actual=40))
    budget.reserve(500)
    clock.now += 1
    budget.update(answered(700, requested=300, actual=90))
    assert budget.level() == 700
    assert (budget.requested, budget.spent) == (420, 130)
    budget.update(answered(0))  # a THROTTLED answer: no cost counted, the level corrected
    assert budget.level() == 0 and budget.wait_for(100) == pytest.approx(2.0)
