"""A code location of many shops: it loads, every shop has its jobs and schedules, and the
default schedules of 500 shops spread their runs over their period instead of one second.

The location is built here with 60 shops: what holds for 60 (each shop's own jobs, schedules
and secrets) holds for 500, whose load costs Dagster a minute of CPU per test worker;
``python bench/many_shops.py`` builds and times 500. The schedules are read from the
configuration of 500, which is what the location gives Dagster."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime

import pytest

from pipelines.definitions import build_definitions
from pipelines.engine.config import parse_config
from pipelines.engine.config.cron import spread
from tests.assets.many_shops import many_shops

SHOPS = 500
#: shops of the location built by the test (its cost grows with the count)
BUILT = 60


@pytest.fixture(scope="module")
def location():
    config = parse_config(many_shops(BUILT))
    defs = build_definitions(config)
    return config, defs, defs.get_repository_def()


def first_fire(cron: str, after: datetime) -> datetime:
    from dagster._utils.schedules import cron_string_iterator

    return next(cron_string_iterator(after.timestamp(), cron, "UTC"))


def test_every_shop_has_its_jobs_and_schedules(location):
    config, _, repository = location
    names = [s.name for s in config.sources]

    assert len(names) == BUILT
    jobs = {job.name for job in repository.get_all_jobs()}
    assert {f"{n}_{kind}" for n in names for kind in ("sync", "reconcile")} <= jobs
    schedules = {s.name: s for s in repository.schedule_defs}
    assert {f"{n}{kind}" for n in names for kind in ("_schedule", "_reconcile_schedule")} <= set(
        schedules)
    # each job is the shop's own: its assets and its secrets, nothing of another shop
    job = repository.get_job("shop_0007_sync")
    assert {key.path[0] for key in job.asset_layer.selected_asset_keys} == {"shop_0007"}
    assert {k for k in job.resource_defs if k.endswith("_secrets")} == {"shop_0007_secrets"}


def test_the_location_schedules_each_shop_as_its_configuration_says(location):
    config, _, repository = location

    for source in config.sources:
        assert repository.get_schedule_def(f"{source.name}_schedule").cron_schedule == (
            config.schedule_for(source))
        assert repository.get_schedule_def(f"{source.name}_reconcile_schedule").cron_schedule == (
            config.reconciliation_schedule_for(source))


@pytest.mark.parametrize(("kind", "period"), [("sync", 15), ("reconcile", 5)])
def test_the_default_schedules_spread_the_shops_over_their_period(kind, period):
    config = parse_config(many_shops(SHOPS))
    cron = config.schedule_for if kind == "sync" else config.reconciliation_schedule_for
    after = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    fires = Counter(first_fire(cron(s) or "", after) for s in config.sources)

    assert len(fires) == period  # every minute of the period is used …
    assert max(fires.values()) <= math.ceil(SHOPS / period)  # … by its share of the shops


def test_a_schedule_written_in_the_file_is_kept_as_written():
    document = many_shops(3)
    document["sources"][1]["schedule"] = "*/15 * * * *"
    document["reconciliation"] = {"schedule": "0 * * * *"}
    config = parse_config(document)
    defs = build_definitions(config)

    assert defs.resolve_schedule_def("shop_0001_schedule").cron_schedule == "*/15 * * * *"
    assert defs.resolve_schedule_def("shop_0000_schedule").cron_schedule.endswith(
        "-59/15 * * * *")
    assert {defs.resolve_schedule_def(f"{s.name}_reconcile_schedule").cron_schedule
            for s in config.sources} == {"0 * * * *"}


def test_a_shop_keeps_its_minute_as_shops_come_and_go():
    names = tuple(f"shop_{i:04d}" for i in range(SHOPS))
    before = spread(names, 15)
    after = spread((*names[:100], *names[101:], "shop_new"), 15)

    moved = [n for n in names if n != names[100] and before[n] != after[n]]
    assert len(moved) <= SHOPS // 50, moved  # a few, where a minute was full
