"""The sync engine end to end, the same cases on every platform: each platform's fake
source (tests/engine/drivers) → the sandbox, over real HTTP, with a real SQLite state
store. A first sync leaves the destination equal to the source mapped outside the engine, a
second sends nothing, a change at the source is sent and nothing else, a deletion there is
deleted at the destination. What only one platform does is its ``test_sync_<platform>.py``."""

from __future__ import annotations

import asyncio
import importlib
from collections import Counter
from pathlib import Path

import pytest

from connectors.marketing.resources import SYNC_RESOURCES
from pipelines.engine.config import ConfigError
from pipelines.engine.plan import SETTLE
from pipelines.engine.state import ItemStatus
from tests.engine.drivers.base import BAD_EMAIL, ROUTES, Driver, FirstSync
from tests.engine.support import EngineSetup, assert_stored_as_mapped
from tests.support import applicable

DRIVERS: list[Driver] = [
    importlib.import_module(f"tests.engine.drivers.{path.stem}").DRIVER
    for path in sorted((Path(__file__).parent / "drivers").glob("*.py")) if path.stem != "base"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every case takes every driver it applies to (``tests.support.applicable``: a folder
    has no secret); a case taking ``resource`` takes each resource the driver compares."""
    drivers = applicable(DRIVERS, metafunc)
    if "resource" in metafunc.fixturenames:
        pairs = [(d, r) for d in drivers for r in d.compared]
        metafunc.parametrize(("driver", "resource"), pairs,
                             ids=[f"{d.platform}-{r}" for d, r in pairs])
    else:
        metafunc.parametrize("driver", drivers, ids=[d.platform for d in drivers])


def test_a_first_sync_leaves_the_destination_equal_to_the_mapped_source(
    driver: Driver, resource: str, first_sync: FirstSync
) -> None:
    setup = first_sync.setup
    expected = driver.expected(setup, driver.compared[resource])[resource]

    assert_stored_as_mapped(setup.stored(resource, ROUTES[resource]), expected, resource,
                            ignore=driver.ignore)


def test_orders_arrive_field_by_field(driver: Driver, first_sync: FirstSync) -> None:
    setup = first_sync.setup
    orders = {o["order_id"]: o for o in setup.listed("/orders")}
    expected = driver.expected(setup, "orders")["orders"]

    assert set(orders) == set(expected)
    for order_id, item in expected.items():
        for field in driver.order_fields:
            assert orders[order_id][field] == item[field], (order_id, field)
        if (item.get("customer") or {}).get("email"):
            assert orders[order_id]["customer_email"] == item["customer"]["email"], order_id


@pytest.mark.case("invalid_orders")
def test_invalid_orders_are_quarantined_with_their_reasons(
    driver: Driver, first_sync: FirstSync
) -> None:
    quarantined = first_sync.setup.state.entries(driver.source, "orders",
                                                 {ItemStatus.QUARANTINED})

    assert quarantined, "the fake has orders with a bad email"
    assert BAD_EMAIL in {reason for entry in quarantined for reason in entry.errors}
    assert all(entry.payload for entry in quarantined)
    assert first_sync.reports["orders"].counts["orders"]["quarantined"] == len(quarantined)


def test_a_second_run_with_no_change_sends_nothing(setup: EngineSetup) -> None:
    setup.run()
    accepted_before = setup.accepted()

    again = setup.run()

    assert sum(r.total("pushed") for r in again) == 0
    assert setup.accepted() == accepted_before


def test_the_next_run_sends_only_what_changed(driver: Driver, setup: EngineSetup) -> None:
    setup.run()
    changed = driver.change(setup)
    setup.clock.advance(SETTLE)  # a sync reads up to a settled second

    again = setup.run_by_stream()

    pushed: Counter[str] = Counter()
    for report in again.values():
        for resource, counts in report.counts.items():
            pushed[resource] += counts.get("pushed", 0)
    assert +pushed == changed.pushed
    if changed.orders_read is not None:
        assert again["orders"].records == changed.orders_read
    for resource, rows in changed.stored.items():
        stored = setup.stored(resource, ROUTES[resource])
        for key, values in rows.items():
            assert key in stored, (resource, key)
            assert {f: stored[key][f] for f in values} == values, (resource, key)


@pytest.mark.case("deletions")
def test_records_deleted_at_the_source_are_deleted_at_the_destination(
    driver: Driver, setup: EngineSetup
) -> None:
    setup.run()
    deleted = driver.delete(setup)
    setup.clock.advance(SETTLE)

    report = asyncio.run(setup.runner().reconcile(deadline_seconds=600))

    for resource, count in Counter(d.resource for d in deleted).items():
        assert report.resources[resource].deleted == count, resource
        assert setup.state.counts(driver.source)[resource]["deleted"] == count, resource
    for gone in deleted:
        id_field = SYNC_RESOURCES[gone.resource].key_fields[0]
        listed = {str(row[id_field]) for row in setup.listed(ROUTES[gone.resource])}
        assert gone.record_id not in listed, gone
    again = asyncio.run(setup.runner().reconcile(deadline_seconds=600))
    assert sum(c.deleted for c in again.resources.values()) == 0


@pytest.mark.case("missing_secret")
def test_a_missing_secret_names_its_environment_variable(
    driver: Driver, setup: EngineSetup
) -> None:
    assert driver.secret is not None
    field, variable = driver.secret
    setup.env.pop(variable)

    with pytest.raises(ConfigError) as caught:
        setup.run()

    assert caught.value.problems == [
        f"sources.{driver.source}.connection.{field}: the environment variable {variable} is"
        " not set — export it"]
