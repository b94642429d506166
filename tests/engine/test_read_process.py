"""Reading and mapping in a process of its own (``tuning.read_process``): a run that does
sends, quarantines, records and reports what a run reading in its own process does, on every
platform (the fake shops listen on ports of their own, which the process reads over HTTP),
raises what the source raises, and leaves no process behind. A destination that dies
mid-sync: ``test_destination_down.py``."""

from __future__ import annotations

import asyncio
import os
import pickle
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from sqlalchemy import create_engine, text

from connectors.marketing.resources import SYNC_RESOURCES
from connectors.marketing.samples import sample_item
from connectors.sources.base import Position
from pipelines.engine.gate import (
    EncodedItem,
    KnownProducts,
    PrecheckedItem,
    check_quality,
    hash_of,
    payload_of,
    problems,
)
from pipelines.engine.mapped_pages import Mapped, pack, unpack
from pipelines.engine.mappings.base import MappedItem
from pipelines.engine.plan import ReadKind, ReadPlan
from pipelines.engine.quality.held import HeldTally
from pipelines.engine.read_process import READ_STAGES, ReadProcess, ReadSpec
from pipelines.engine.stages import StageTimer
from pipelines.engine.state import ItemStatus, Outcome, StateStore
from pipelines.engine.stream_report import StreamReport
from sandbox.shops.files.config import connection as files_connection
from tests.engine.drivers.base import ROUTES, Driver
from tests.engine.drivers.files import Files
from tests.engine.drivers.sql import Sql
from tests.engine.drivers.woocommerce import make_setup as woo_setup
from tests.engine.drivers.woocommerce import start_shop
from tests.engine.state_support import S, outcome
from tests.engine.support import EngineSetup, MakeSetup, assert_stored_as_mapped
from tests.engine.test_sync_every_platform import DRIVERS
from tests.support import eventually


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


@pytest.fixture
def two_setups(driver: Driver, engine_setup: MakeSetup, tmp_path: Path
               ) -> Iterator[tuple[EngineSetup, EngineSetup]]:
    """Two fresh fakes of ``driver``'s platform: one read in the run's process, one in a
    process of its own."""
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    inline = driver.start(engine_setup, tmp_path / "inline")
    apart = reading_in_a_process(driver.start(engine_setup, tmp_path / "apart"))
    yield inline, apart
    driver.stop(inline)
    driver.stop(apart)


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.platform)
def test_a_sync_reading_in_a_process_does_what_one_reading_in_its_own_does(
    driver: Driver, two_setups: tuple[EngineSetup, EngineSetup]
) -> None:
    inline, apart = two_setups

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


def test_an_item_that_came_as_its_json_and_is_held_back_by_the_suite_keeps_its_fields(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    """An item read in a process travels as its JSON; when the quality suite holds it back,
    the ledger keeps its fields, as a run reading in its own process does."""
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    inline = Sql().start(engine_setup, tmp_path / "inline")
    apart = reading_in_a_process(Sql().start(engine_setup, tmp_path / "apart"))
    for setup in (inline, apart):
        # the item model takes it; the suite's address rule does not
        setup.database.change("customers", 3, email="ada@example.c")

    inline.run(), apart.run()

    def held(setup: EngineSetup) -> list[tuple[str, str, list[str], object]]:
        return [(e.key, e.status, e.errors, e.payload)
                for e in setup.state.entries(Sql.source, "customers")
                if e.status == "quarantined"]

    assert held(apart) == held(inline)
    [(_, _, errors, payload)] = [entry for entry in held(apart) if entry[0] == "3"]
    assert any("match_regex(email)" in e for e in errors)  # the suite's rule, not the model's
    assert isinstance(payload, dict) and payload["email"] == "ada@example.c"
    assert readers() == []


def test_a_dry_run_reading_in_a_process_shows_the_same_samples(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    """A dry run's samples are items' fields: those that came as their JSON are decoded for
    them, and read as they would have been mapped in the run's own process."""
    (tmp_path / "inline").mkdir(), (tmp_path / "apart").mkdir()
    inline = Sql().start(engine_setup, tmp_path / "inline")
    apart = reading_in_a_process(Sql().start(engine_setup, tmp_path / "apart"))

    def samples(setup: EngineSetup) -> dict[str, list[dict[str, object]]]:
        return {resource: items for report in setup.run(dry_run=True)
                for resource, items in report.samples.items()}

    shown = samples(apart)
    assert shown == samples(inline)
    assert shown["orders"] and all(isinstance(item, dict) for item in shown["orders"])
    assert apart.accepted() == {}
    assert readers() == []


def test_a_timed_run_is_given_the_read_process_cpu_by_stage(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    """What the process spent reading, mapping, checking and sending comes back with each
    stream's end, into the run's stage timer (``bench/sync.py`` prints it)."""
    setup = reading_in_a_process(Sql().start(engine_setup, tmp_path))
    runner = setup.runner()
    runner.stages = StageTimer()

    reports = asyncio.run(runner.run())

    spent = runner.stages.read_process
    assert list(spent) == list(READ_STAGES)
    assert all(seconds >= 0 for seconds in spent.values())
    assert spent["map"] > 0 and spent["check"] > 0 and spent["send"] > 0
    assert sum(r.total("accepted") for r in reports) > 0
    assert readers() == []


def test_the_stream_after_the_one_being_sent_is_opened_in_the_process_beside_it(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    """While the process still sends a stream's pages, it opens the next stream's read: a
    drop folder's next files are listed (and parsed) before the run has taken the first
    stream's second page, let alone asked for the next stream."""
    drop = files_connection(str(tmp_path / "drop"))
    setup = Files().start(engine_setup, tmp_path, connection={
        **drop, "options": {**drop["options"], "page_size": 5}})
    process = ReadProcess(ReadSpec(setup.config.sources[0], dict(setup.env), None, None))
    until = datetime.now(UTC) + timedelta(days=1)
    process.then = lambda stream: ("orders", ReadPlan(ReadKind.FULL, None, until)) \
        if stream == "customers" else None
    memory = tmp_path / "drop" / ".shopsync" / f"{Files.source}.json"  # the source's memory

    def listed() -> set[str]:
        return set(orjson.loads(memory.read_bytes())["streams"]) if memory.exists() else set()

    async def first_page_only() -> set[str]:
        pages = process.pages("customers", ReadPlan(ReadKind.FULL, None, until))
        try:
            await anext(pages)  # 5 of its 25 customers: the rest stay in the process
            return eventually(lambda: "orders" in listed() and listed(),
                              "the orders' files listed by the process", timeout=30)
        finally:
            await pages.aclose()

    try:
        assert asyncio.run(first_page_only()) == {"customers", "orders"}
    finally:
        process.stop(wait=False)
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


def test_a_shop_budget_is_shared_with_the_process_through_the_state_database(
    engine_setup: MakeSetup, tmp_path: Path
) -> None:
    shop = start_shop()
    try:
        connection = {"url": shop.root, "key_env": "T_WC_KEY", "secret_env": "T_WC_SECRET",
                      "options": {"requests_per_second": 1000}}
        setup = reading_in_a_process(woo_setup(engine_setup, shop, connection=connection))

        reports = setup.run()

        assert sum(r.total("accepted") for r in reports) > 0
        assert sum(r.total("failed") for r in reports) == 0
        with create_engine(setup.state.url).connect() as db:
            budgets = db.execute(text("SELECT budget FROM shopsync_request_budgets")).scalars()
            assert f"shop {shop.root.rstrip('/')}" in set(budgets)
    finally:
        shop.stop()
    assert readers() == []


def test_items_prechecked_where_they_are_read_are_judged_as_the_run_judges_them() -> None:
    """The read process hashes each item, runs its item model and encodes the items that
    may go on (``pack``): the run then finds the same hashes and the same reasons to hold an
    item back as it would itself, and sends the same JSON."""
    when = datetime(2024, 5, 1, tzinfo=UTC)
    customer = sample_item("customers")
    items = [
        MappedItem("customers", "7", customer, "7", when),
        MappedItem("customers", "8", {**customer, "email": 12}, "8", when),  # the model's
        MappedItem("customers", "9", {**customer, "n": 2**70}, "9", when),  # past JSON
        MappedItem("customers", "10", {"_errors": ["customers record '10': cannot map"]},
                   "10", when),
        MappedItem("no such resource", "11", {"id": "11"}, "11", when),
    ]
    page = [Mapped(Position(when, "7"), items), Mapped(Position(when, "12"), None)]

    back = unpack(pickle.loads(pickle.dumps(pack(page))))

    assert [m.position for m in back] == [m.position for m in page]
    assert back[1].items is None
    model = SYNC_RESOURCES["customers"].model
    for sent, received in zip(items[:4], back[0].items or [], strict=False):
        unwritable: dict[str, str] = {}
        assert isinstance(received, PrecheckedItem)
        assert received.content_hash == hash_of(sent, unwritable)
        assert received.hold == problems(model, sent, unwritable.get(sent.key))
    held = [m.hold for m in back[0].items or [] if isinstance(m, PrecheckedItem)]
    assert [h is not None for h in held] == [False, True, True, True]
    # the item that may go on travels as its JSON, sent and recorded as those bytes; the
    # ones held back travel as they are, for the ledger to keep what it can of them
    free, *kept = (back[0].items or [])[:4]
    assert isinstance(free, EncodedItem) and free.item == customer
    assert orjson.dumps(payload_of(free)) == orjson.dumps(customer)
    assert [type(m) for m in kept] == [PrecheckedItem] * 3
    assert [m.item for m in kept] == [m.item for m in items[1:4]]
    # what cannot be prechecked there reaches the run as it was mapped
    assert type((back[0].items or [])[4]) is MappedItem


def test_lines_are_looked_up_from_what_the_read_process_took(store: StateStore) -> None:
    """Carts name products and have no language of their own: the look-up of their
    products reads the rows the read process took, so no cart is decoded for it either."""
    when = datetime(2024, 5, 1, tzinfo=UTC)
    carts = [sample_item("carts", cart_id=f"k{i}") for i in range(10)]
    store.record(S, "products", [outcome(f"{line['product_id']}|en", ItemStatus.ACCEPTED)
                                 for line in carts[0]["products"]])
    page = [Mapped(Position(when, c["cart_id"]),
                   [MappedItem("carts", c["cart_id"], c, c["cart_id"], when)]) for c in carts]
    items = [m for mapped in unpack(pickle.loads(pickle.dumps(pack(page))))
             for m in mapped.items or []]
    assert all(isinstance(m, EncodedItem) for m in items)
    report = StreamReport("shop", "carts")

    kept = check_quality("carts", items, {m.key: m.content_hash for m in items}, [], report,
                         HeldTally("carts"), KnownProducts(store, S, "en"))

    assert [m.key for m in kept] == [c["cart_id"] for c in carts]
    assert not any("_decoded" in vars(m) for m in items)
    # the lines' products were found known: the rule ran, and no line names an unknown one
    ran = [r for q in report.quality["carts"] for r in q.results
           if "unknown_product_lines" in r["name"]]
    assert ran and all(r["success"] for r in ran)


def test_items_that_came_as_their_json_are_checked_by_the_suite_without_being_decoded(
) -> None:
    """The suite reads the rows the read process took: a chunk that passes it is sent as
    it came, no item decoded on the way; one the suite holds back is kept with its
    fields."""
    when = datetime(2024, 5, 1, tzinfo=UTC)
    customers = [sample_item("customers", customer_id=f"c{i}", email=f"c{i}@example.com")
                 for i in range(20)]
    customers[4]["email"] = "ada@example.c"  # the item model takes it, the suite does not
    page = [Mapped(Position(when, c["customer_id"]),
                   [MappedItem("customers", c["customer_id"], c, c["customer_id"], when)])
            for c in customers]
    items = [m for mapped in unpack(pickle.loads(pickle.dumps(pack(page))))
             for m in mapped.items or []]
    assert all(isinstance(m, EncodedItem) for m in items)
    held: list[Outcome] = []

    kept = check_quality("customers", items, {m.key: m.content_hash for m in items}, held,
                         StreamReport("shop", "customers"), HeldTally("customers"),
                         lambda *_: None)

    assert [m.key for m in kept] == [c["customer_id"] for i, c in enumerate(customers) if i != 4]
    assert [(o.key, o.payload) for o in held] == [("c4", customers[4])]
    assert any("match_regex(email)" in e for e in held[0].errors)
    assert not any("_decoded" in vars(m) for m in kept)
