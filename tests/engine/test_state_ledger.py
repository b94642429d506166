"""The state store's ledger of outcomes per key: attempts, errors, payloads, hashes,
look-ups, counts, paging and marking, up to twenty thousand outcomes, on SQLite and on
PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

import orjson

from pipelines.engine.state import ItemStatus, StateStore
from pipelines.engine.state.base import IN_CHUNK
from tests.engine.state_support import R, S, outcome

# -- the ledger


def test_attempts_count_consecutive_unsuccessful_sends(store: StateStore) -> None:
    def attempts() -> int:
        return store.ledger(S, R, ["1"])["1"].attempts

    store.record(S, R, [outcome("1", ItemStatus.FAILED, errors=["timeout"], payload={"a": 1})])
    assert attempts() == 1
    store.record(S, R, [outcome("1", ItemStatus.REJECTED, errors=["bad"], payload={"a": 1})])
    assert attempts() == 2
    store.record(S, R, [outcome("1", ItemStatus.QUARANTINED, errors=["no email"])])
    assert attempts() == 2, "quarantined is no send"
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED)])
    assert attempts() == 0
    store.record(S, R, [outcome("1", ItemStatus.FAILED, "h2", payload={"a": 2})])
    assert attempts() == 1


def test_an_entry_keeps_errors_and_payload_until_accepted(store: StateStore) -> None:
    payload = {"id": "1", "name": "Zoë ☃", "lines": [{"qty": 2, "price": 9.5}], "x": None}
    store.record(
        S, R, [outcome("1", ItemStatus.REJECTED, "h1", source_record_id="r1",
                       errors=["email: invalid"], payload=payload)]
    )
    rejected = store.ledger(S, R, ["1"])["1"]
    assert (rejected.status, rejected.content_hash) == (ItemStatus.REJECTED, "h1")
    assert rejected.errors == ["email: invalid"]
    assert rejected.payload == payload
    assert rejected.source_record_id == "r1"
    assert rejected.accepted_at is None and rejected.accepted_hash is None

    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h2", payload=payload)])
    accepted = store.ledger(S, R, ["1"])["1"]
    assert (accepted.status, accepted.content_hash) == (ItemStatus.ACCEPTED, "h2")
    assert accepted.payload == payload, "kept until read back, to send again if it never shows"
    assert accepted.errors == []
    assert accepted.accepted_hash == "h2"
    assert accepted.source_record_id == "r1", "a known source record id is kept"
    assert accepted.first_seen_at == rejected.first_seen_at
    assert accepted.updated_at >= rejected.updated_at
    assert accepted.accepted_at is not None
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].payload is None, "a visible item's payload goes"
    for moment in (accepted.first_seen_at, accepted.updated_at, accepted.accepted_at):
        assert moment.tzinfo is UTC
        assert abs(datetime.now(UTC) - moment) < timedelta(minutes=5)


def test_a_payload_given_as_its_json_is_kept_as_its_fields(store: StateStore) -> None:
    payload = {"id": "1", "name": "Zoë ☃", "lines": [{"qty": 2, "price": 9.5}], "x": None}
    as_json = orjson.Fragment(orjson.dumps(payload))

    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h1", payload=as_json),
                        outcome("2", ItemStatus.REJECTED, "h2", errors=["bad"],
                                payload=as_json)])

    assert {k: e.payload for k, e in store.ledger(S, R, ["1", "2"]).items()} == {
        "1": payload, "2": payload}


def test_a_failed_resend_keeps_the_accepted_hash_and_a_new_acceptance_awaits_visibility(
    store: StateStore,
) -> None:
    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h1")])
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].visible_at is not None

    store.record(S, R, [outcome("1", ItemStatus.FAILED, "h2", payload={"v": 2})])
    failed = store.ledger(S, R, ["1"])["1"]
    assert (failed.content_hash, failed.accepted_hash) == ("h2", "h1")
    assert failed.payload == {"v": 2}

    store.record(S, R, [outcome("1", ItemStatus.ACCEPTED, "h2")])
    again = store.ledger(S, R, ["1"])["1"]
    assert again.accepted_hash == "h2"
    assert again.visible_at is None, "the new content is not confirmed visible yet"


def test_a_key_twice_in_one_batch_is_applied_in_order(store: StateStore) -> None:
    store.record(
        S, R,
        [
            outcome("1", ItemStatus.FAILED, "h1", payload={"v": 1}),
            outcome("2", ItemStatus.ACCEPTED),
            outcome("1", ItemStatus.REJECTED, "h2", errors=["bad"], payload={"v": 2}),
        ],
    )
    entry = store.ledger(S, R, ["1"])["1"]
    assert (entry.status, entry.content_hash, entry.attempts) == (ItemStatus.REJECTED, "h2", 2)


def test_the_ledger_is_kept_per_source_and_resource(store: StateStore) -> None:
    store.record(S, "orders", [outcome("1", ItemStatus.ACCEPTED)])
    store.record(S, "products", [outcome("1", ItemStatus.REJECTED)])
    store.record("shop-b", "orders", [outcome("1", ItemStatus.FAILED)])

    assert store.ledger(S, "orders", ["1"])["1"].status is ItemStatus.ACCEPTED
    assert store.ledger(S, "products", ["1"])["1"].status is ItemStatus.REJECTED
    assert store.ledger("shop-b", "orders", ["1"])["1"].status is ItemStatus.FAILED


def test_a_look_up_of_many_keys_returns_the_known_ones(store: StateStore) -> None:
    known = [f"{i}|en" for i in range(IN_CHUNK * 2 + 100)]
    store.record(S, R, [outcome(key, ItemStatus.ACCEPTED) for key in known])

    asked = [*known, "nope", known[0], "404|fr"]
    found = store.ledger(S, R, asked)
    assert set(found) == set(known)
    assert all(found[key].key == key for key in known)
    assert store.ledger(S, R, []) == {}


def test_states_are_each_known_key_s_hash_and_status_of_its_source_and_resource(
        store: StateStore) -> None:
    statuses = list(ItemStatus)
    known = [f"{i}|en" for i in range(IN_CHUNK * 2 + 100)]
    store.record(S, R, [outcome(key, statuses[i % len(statuses)], f"h{i}")
                        for i, key in enumerate(known)])
    store.record(S, "products", [outcome("nope", ItemStatus.ACCEPTED)])
    store.record("shop-b", R, [outcome("404|fr", ItemStatus.ACCEPTED)])

    found = store.states(S, R, [*known, "nope", known[0], "404|fr"])
    assert found == {key: (f"h{i}", statuses[i % len(statuses)])
                     for i, key in enumerate(known)}
    assert all(type(status) is ItemStatus for _, status in found.values())
    assert store.states(S, R, []) == {}


def test_counts_are_per_resource_and_status(store: StateStore) -> None:
    store.record(S, "orders", [outcome(str(i), ItemStatus.ACCEPTED) for i in range(3)])
    store.record(S, "orders", [outcome("9", ItemStatus.REJECTED)])
    store.record(S, "products", [outcome("1", ItemStatus.QUARANTINED)])
    store.record("shop-b", "orders", [outcome("1", ItemStatus.FAILED)])

    assert store.counts(S) == {
        "orders": {"accepted": 3, "rejected": 1},
        "products": {"quarantined": 1},
    }
    assert store.counts(S, "products") == {"products": {"quarantined": 1}}
    assert store.counts() == {
        "orders": {"accepted": 3, "rejected": 1, "failed": 1},
        "products": {"quarantined": 1},
    }
    assert store.counts("nobody") == {}


def test_entries_page_through_the_ledger_in_key_order(store: StateStore) -> None:
    statuses = [ItemStatus.ACCEPTED, ItemStatus.FAILED, ItemStatus.REJECTED, ItemStatus.VISIBLE]
    keys = [f"{i:05d}" for i in range(2500)]
    store.record(S, R, [outcome(k, statuses[i % 4]) for i, k in enumerate(keys)])
    store.record(S, "other", [outcome("00001", ItemStatus.FAILED)])

    def all_pages(statuses: Collection[ItemStatus] | None = None) -> tuple[list[str], int]:
        seen: list[str] = []
        pages, after = 0, None
        while page := store.entries(S, R, statuses, limit=300, after_key=after):
            seen.extend(entry.key for entry in page)
            after, pages = page[-1].key, pages + 1
        return seen, pages

    assert all_pages() == (keys, 9)
    failed, _ = all_pages({ItemStatus.FAILED})
    assert failed == keys[1::4]
    unsent, _ = all_pages([ItemStatus.FAILED, ItemStatus.REJECTED])
    assert unsent == sorted(keys[1::4] + keys[2::4])
    assert [e.key for e in store.entries(S, R, after_key="02497")] == ["02498", "02499"]


def test_entries_order_keys_by_bytes_on_every_backend(store: StateStore) -> None:
    keys = ["b", "B", "a|fr", "a|en", "10", "9", "_x", "é"]
    store.record(S, R, [outcome(k, ItemStatus.ACCEPTED) for k in keys])
    assert [e.key for e in store.entries(S, R)] == sorted(keys, key=lambda k: k.encode())
    # of some statuses (one look-up each, merged): the same order
    store.mark(S, R, keys[::2], ItemStatus.FAILED)
    store.mark(S, R, keys[1::4], ItemStatus.REJECTED)
    unsent = store.entries(S, R, [ItemStatus.FAILED, ItemStatus.REJECTED])
    assert [e.key for e in unsent] == sorted(keys[::2] + keys[1::4], key=lambda k: k.encode())
    assert [e.key for e in store.entries(S, R, [ItemStatus.FAILED, ItemStatus.REJECTED],
                                         limit=2, after_key="B")] == ["_x", "a|fr"]


def test_live_records_are_the_record_ids_of_items_not_deleted(store: StateStore) -> None:
    store.record(S, R, [outcome(f"{i:05d}", ItemStatus.ACCEPTED, source_record_id=f"r{i // 2}")
                        for i in range(12)])
    store.record(S, R, [outcome("x", ItemStatus.QUARANTINED)])  # no source record id
    store.record(S, "other", [outcome("00001", ItemStatus.ACCEPTED, source_record_id="r9")])
    store.mark(S, R, ["00010", "00011"], ItemStatus.DELETED)

    assert sorted(store.live_records(S, R, page=5)) == sorted(
        f"r{i // 2}" for i in range(10))


def test_mark_changes_the_status_of_known_keys_only(store: StateStore) -> None:
    store.record(
        S, R,
        [outcome(k, ItemStatus.ACCEPTED) for k in ("1", "2")]
        + [outcome(k, ItemStatus.FAILED, errors=["500"], payload={"k": k}) for k in ("3", "4")],
    )
    assert store.mark(S, R, ["1", "2", "unknown"], ItemStatus.VISIBLE) == 2
    visible = store.ledger(S, R, ["1"])["1"]
    assert visible.status is ItemStatus.VISIBLE
    assert visible.visible_at is not None and visible.visible_at.tzinfo is UTC

    store.mark(S, R, ["3"], ItemStatus.PARKED)
    parked = store.ledger(S, R, ["3"])["3"]
    assert (parked.status, parked.payload, parked.errors) == (
        ItemStatus.PARKED, {"k": "3"}, ["500"]
    )
    assert parked.attempts == 1

    store.mark(S, R, ["4"], ItemStatus.DELETED)
    assert store.ledger(S, R, ["4"])["4"].payload is None
    assert store.counts(S) == {R: {"visible": 2, "parked": 1, "deleted": 1}}

    first_visible = visible.visible_at
    store.mark(S, R, ["1"], ItemStatus.VISIBLE)
    assert store.ledger(S, R, ["1"])["1"].visible_at == first_visible, "the first read-back counts"


# -- scale


def test_twenty_thousand_outcomes_recorded_in_batches_are_each_counted_once(store: StateStore) -> None:
    outcomes = [
        outcome(
            f"c{i}",
            ItemStatus.REJECTED if i % 20 == 0 else ItemStatus.ACCEPTED,
            f"hash{i}",
            source_record_id=str(i),
            errors=["email: invalid"] if i % 20 == 0 else [],
            payload={"id": i, "email": f"c{i}@example"} if i % 20 == 0 else None,
        )
        for i in range(20_000)
    ]
    for first in range(0, len(outcomes), 500):
        store.record(S, "customers", outcomes[first : first + 500])

    assert store.counts(S) == {"customers": {"accepted": 19_000, "rejected": 1_000}}
    rejected = store.entries(S, "customers", statuses=[ItemStatus.REJECTED])
    assert {e.errors[0] for e in rejected} == {"email: invalid"} and len(rejected) == 1_000
