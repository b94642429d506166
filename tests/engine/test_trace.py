"""One item's story: what the state store keeps of every step (on SQLite and PostgreSQL),
and what a person reads of items a real sync sent to the sandbox — confirmed, quarantined,
refused, re-sent — and of items recorded before events were kept."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import MIGRATIONS, ItemStatus, LedgerEntry, Outcome, StateStore
from pipelines.engine.trace import FROM_LEDGER, Story, item_story, stories, when
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine.support import woo_runner

SOURCE = "woo"
S, R = "shop-a", "orders"


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", "20", "--customers", "8", "--products", "4")
    yield running
    running.stop()


def runner_for(sandbox: Any, shop: RunningFakeShop, tmp_path: Any, **source: Any) -> SourceRunner:
    return woo_runner(sandbox, shop, f"sqlite:///{tmp_path}/s.db", **source)


def synced_and_confirmed(start: Any, shop: RunningFakeShop, tmp_path: Any, stream: str
                         ) -> tuple[SourceRunner, LedgerEntry]:
    """A runner that synced ``stream`` and confirmed it visible, and one of its items."""
    runner = runner_for(start("--visibility-delay", "0"), shop, tmp_path)
    asyncio.run(runner.run(streams=[stream]))
    asyncio.run(runner.reconcile(deadline_seconds=600))
    return runner, runner.state.entries(SOURCE, stream, {ItemStatus.VISIBLE}, limit=1)[0]


def story_of(runner: SourceRunner, resource: str, item_id: str) -> Story:
    (story,) = stories(runner.state, SOURCE, resource, item_id)
    return story


# -- what the store keeps


def test_each_outcome_and_mark_is_an_event_of_its_item_in_the_run_it_happened_in(
    store: StateStore,
) -> None:
    sync = store.start_run(S, "orders", "sync")
    store.record(S, R, [Outcome("1", "h1", ItemStatus.ACCEPTED, "1", payload={"a": 1}),
                        Outcome("2", "h2", ItemStatus.REJECTED, "2", ["email: invalid"])])
    store.finish_run(sync, "succeeded", {})
    reconcile = store.start_run(S, None, "reconcile")
    store.mark(S, R, ["1"], ItemStatus.VISIBLE, details={"1": {"lag": [0.1, 0.2]}})
    store.mark(S, R, ["2", "unknown"], ItemStatus.PARKED)
    store.finish_run(reconcile, "succeeded", {})
    store.mark(S, R, ["1"], ItemStatus.DELETED)  # outside any run

    first, second = store.events(S, R, "1"), store.events(S, R, "2")

    assert [(e.kind, e.run_id, e.run_kind) for e in first] == [
        ("accepted", sync, "sync"), ("visible", reconcile, "reconcile"), ("deleted", None, None)]
    assert first[0].content_hash == "h1" and first[0].detail == {"record": "1", "changed_at": None}
    assert first[1].detail == {"lag": [0.1, 0.2]}
    assert [(e.kind, e.errors) for e in second] == [("rejected", ["email: invalid"]),
                                                    ("parked", ["email: invalid"])]
    assert store.events(S, R, "unknown") == []


def test_the_event_names_the_innermost_run_and_an_audit_finding_its_resources_audit_run(
    store: StateStore,
) -> None:
    store.record(S, R, [Outcome("1", "h", ItemStatus.VISIBLE)])
    store.record(S, "customers", [Outcome("c", "h", ItemStatus.VISIBLE)])
    audits = {r: store.start_run(S, r, "audit") for r in (R, "customers")}
    store.note_audit(S, R, ["1"], [])
    store.note_audit(S, "customers", [], ["c"])
    repair = store.start_run(S, "orders", "backfill")
    store.record(S, R, [Outcome("1", "h", ItemStatus.ACCEPTED, "1")])
    other = store.start_run("shop-b", None, "sync")  # another source's run names none of these

    assert [(e.kind, e.run_id) for e in store.events(S, R, "1")] == [
        ("visible", None), ("missing", audits[R]), ("accepted", repair)]
    assert [(e.kind, e.run_id) for e in store.events(S, "customers", "c")][1:] == [
        ("different", audits["customers"])]
    store.finish_run(other, "succeeded", {})


def test_an_item_is_found_by_its_key_or_by_the_source_record_it_came_from(
    store: StateStore,
) -> None:
    store.record(S, "products", [Outcome("7|en", "h", ItemStatus.ACCEPTED, "7"),
                                 Outcome("7|fr", "h", ItemStatus.QUARANTINED, "7"),
                                 Outcome("8|en", "h", ItemStatus.ACCEPTED, "8")])

    assert store.keys_for(S, "products", "7|fr") == ["7|fr"]
    assert store.keys_for(S, "products", "7") == ["7|en", "7|fr"]
    assert store.keys_for(S, "products", "9") == []


def test_items_recorded_before_events_were_kept_tell_what_their_ledger_row_knows(
    open_store: Callable[..., StateStore],
) -> None:
    old = open_store(migrations=MIGRATIONS[:4])
    old.record(S, R, [Outcome("1", "h", ItemStatus.ACCEPTED, "1", payload={"a": 1})])
    old.mark(S, R, ["1"], ItemStatus.VISIBLE)
    old.record(S, R, [Outcome("2", "h", ItemStatus.REJECTED, "2", ["total: negative"])])
    with old._engine.begin() as conn:  # as version 4 made it: no events, no unseen_at
        conn.execute(text("DROP TABLE shopsync_events"))
        conn.execute(text("ALTER TABLE shopsync_ledger DROP COLUMN unseen_at"))
    old.close()

    store = open_store()
    store.record(S, R, [Outcome("2", "h2", ItemStatus.ACCEPTED, "2")])  # after the upgrade

    entry = store.ledger(S, R, ["1"])["1"]
    confirmed = item_story(store, S, R, "1")
    assert [(e.at, e.summary) for e in confirmed] == [
        (entry.first_seen_at, f"first recorded ({FROM_LEDGER})"),
        (entry.accepted_at, f"last accepted by the API ({FROM_LEDGER})"),
        (entry.visible_at, f"first seen at the destination after that acceptance ({FROM_LEDGER})"),
        (entry.updated_at, f"last recorded as visible ({FROM_LEDGER})"),
    ]
    assert all(e.from_ledger for e in confirmed)
    resent = item_story(store, S, R, "2")
    assert [(e.kind, e.from_ledger) for e in resent] == [("ledger", True), ("accepted", False)]
    assert resent[0].summary == f"first recorded ({FROM_LEDGER})"


def test_events_before_a_moment_are_deleted_for_that_source_only(store: StateStore) -> None:
    store.record(S, R, [Outcome("1", "h", ItemStatus.ACCEPTED, "1")])
    store.record("shop-b", R, [Outcome("1", "h", ItemStatus.ACCEPTED, "1")])
    (recorded,) = store.events(S, R, "1")

    assert store.prune_events(S, before=recorded.at) == 0  # not older than itself
    assert store.prune_events(S, before=recorded.at + timedelta(seconds=1)) == 1
    assert store.events(S, R, "1") == []
    assert len(store.events("shop-b", R, "1")) == 1
    assert store.ledger(S, R, ["1"])["1"].status == ItemStatus.ACCEPTED  # the row stays


# -- what a person reads after real syncs


def test_a_sent_and_confirmed_order_tells_its_read_its_acceptance_and_its_confirmation(
    start, shop, tmp_path
):
    runner, entry = synced_and_confirmed(start, shop, tmp_path, "orders")
    (sync,) = [r for r in runner.state.recent_runs(SOURCE) if r.kind == "sync"]
    (reconcile,) = [r for r in runner.state.recent_runs(SOURCE) if r.kind == "reconcile"]

    story = story_of(runner, "orders", entry.key)

    assert story.text().splitlines()[0] == (
        f"woo/orders {entry.key}: visible now (source record {entry.source_record_id})")
    sent, confirmed = story.events
    assert (sent.kind, sent.run) == ("accepted", f"sync #{sync.id}")
    assert entry.changed_at is not None
    assert sent.summary == (
        f"read from the source (record {entry.source_record_id}, changed there"
        f" {entry.changed_at:%Y-%m-%d %H:%M:%S} UTC), mapped (content {entry.content_hash[:8]});"
        " sent: accepted by the API")
    assert (confirmed.kind, confirmed.run) == ("visible", f"reconcile #{reconcile.id}")
    assert entry.visible_at is not None
    assert confirmed.summary.startswith(
        f"confirmed visible by reconciliation: first seen {when(entry.visible_at)},"
        " visibility lag ≤ ")
    assert ", time to confirmation " in confirmed.summary
    assert sent.at <= confirmed.at


def test_a_quarantined_customer_tells_why_it_was_never_sent(start, shop, tmp_path):
    runner = runner_for(start("--visibility-delay", "0"), shop, tmp_path)
    asyncio.run(runner.run(streams=["customers"]))
    (held,) = runner.state.entries(SOURCE, "customers", {ItemStatus.QUARANTINED})

    (event,) = story_of(runner, "customers", held.key).events

    assert event.kind == "quarantined" and event.run_kind == "sync"
    assert event.summary.endswith(
        "; held back, never sent (quarantined): email: 'not-an-email' is not a well-formed"
        " email address")
    assert event.errors == ("email: 'not-an-email' is not a well-formed email address",)


def test_a_refused_customer_tells_the_apis_errors_and_that_it_was_parked(
    start, shop, tmp_path
):
    runner = runner_for(start("--visibility-delay", "0"), shop, tmp_path,
                        mapping={"customers": {"set": {"id_data_source": 999}}},
                        tuning={"max_rejected_attempts": 1})
    asyncio.run(runner.run(streams=["customers"]))
    asyncio.run(runner.run(streams=["customers"]))  # worn out: parked, not sent again
    refused = runner.state.entries(SOURCE, "customers", {ItemStatus.PARKED}, limit=1)[0]

    rejected, parked = story_of(runner, "customers", refused.key).events

    error = "id_data_source: data source 999 does not exist in this shop"
    assert rejected.kind == "rejected" and rejected.errors == (error,)
    assert rejected.summary.endswith(f"; sent: rejected by the API: {error}")
    assert parked.kind == "parked" and parked.run_kind == "sync"
    assert parked.summary == ("parked for a person (refused too many times; see `shopsync"
                              f" rejections`): {error}")


def test_a_status_that_never_shows_tells_its_resend_and_that_it_was_given_up_on(
    start, shop, tmp_path
):
    runner = runner_for(start("--drop-rate", "1", "--visibility-delay", "0"), shop, tmp_path)
    asyncio.run(runner.run(streams=["statuses"]))
    for _ in range(2):  # sent again at its deadline, then parked after the allowed re-send
        asyncio.run(runner.reconcile(deadline_seconds=0, max_resends=1))
    status = runner.state.entries(SOURCE, "statuses", limit=1)[0]

    sent, resent, parked = story_of(runner, "statuses", status.key).events

    assert (sent.kind, sent.run_kind) == ("accepted", "sync")
    assert (resent.kind, resent.run_kind) == ("accepted", "reconcile")
    assert resent.summary == ("re-sent from the ledger's copy (not visible by its deadline);"
                              " sent: accepted by the API")
    assert (parked.kind, parked.run_kind) == ("parked", "reconcile")
    assert parked.summary.startswith("parked for a person (still not visible after its re-sends")
    assert parked.run_id != resent.run_id  # the second reconciliation gave up


def test_reconciliation_deletes_the_events_past_their_keeping_and_the_story_falls_back_on_the_ledger(
    start, shop, tmp_path
):
    runner, entry = synced_and_confirmed(start, shop, tmp_path, "statuses")
    kept = story_of(runner, "statuses", entry.key)
    before = runner.state.counts(SOURCE)

    assert runner.config.reconciliation.keep_events_days == 90  # by default
    runner.clock.advance(timedelta(days=91))  # type: ignore[attr-defined]
    report = asyncio.run(runner.reconcile(deadline_seconds=600))

    assert report.events_pruned >= len(kept.events) > 0
    assert report.totals()["events_pruned"] == report.events_pruned
    assert runner.state.counts(SOURCE) == before  # every item's state is kept
    told = story_of(runner, "statuses", entry.key).events
    assert told and all(e.from_ledger for e in told)
    assert all(FROM_LEDGER in e.summary for e in told)
