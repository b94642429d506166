"""A sync paces Python's garbage collector for its duration only (``collector.py``)."""

from __future__ import annotations

import gc
import threading

from pipelines.engine.collector import YOUNGEST, freeze_held, paced_for_sync


def test_a_sync_collects_less_often_and_leaves_the_settings_as_it_found_them() -> None:
    before = gc.get_threshold()
    with paced_for_sync():
        assert gc.get_threshold()[0] >= YOUNGEST
        assert gc.get_freeze_count() > 0  # what existed before is not scanned again
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_settings_come_back_only_when_the_last_of_concurrent_syncs_ends() -> None:
    before = gc.get_threshold()
    entered, release = threading.Event(), threading.Event()

    def other_sync() -> None:
        with paced_for_sync():
            entered.set()
            release.wait(timeout=30)

    thread = threading.Thread(target=other_sync)
    thread.start()
    assert entered.wait(timeout=30)
    with paced_for_sync():
        pass
    assert gc.get_threshold()[0] >= YOUNGEST  # the other sync still runs
    release.set()
    thread.join(timeout=30)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_what_a_sync_imports_is_frozen_with_the_rest_and_let_go_when_it_ends() -> None:
    with paced_for_sync():
        at_start = gc.get_freeze_count()
        imported = [[n] for n in range(10_000)]  # a package's objects, made during the sync
        freeze_held()
        assert gc.get_freeze_count() >= at_start + len(imported)
    assert gc.get_freeze_count() == 0
    freeze_held()  # outside a sync: nothing is frozen, to be held for ever
    assert gc.get_freeze_count() == 0
