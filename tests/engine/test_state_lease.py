"""A source's run lease: while one run holds a source, another — from another store, another
process — is refused at once with a message that names the source and the run holding it;
other sources are free; the lease comes back when the run ends, or its process dies, on
SQLite and on PostgreSQL alike. The runner's syncs, reconciliations and audits take it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from pipelines.engine.audit import audit
from pipelines.engine.config import parse_config
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import SourceBusy, StateStore
from tests.engine.state_support import OpenStore, S
from tests.support import eventually


def test_a_second_run_of_a_source_is_refused_naming_the_one_that_holds_it(
    open_store: OpenStore,
) -> None:
    first, second = open_store(), open_store()
    with first.lease(S, "sync"):
        with pytest.raises(SourceBusy) as refused:
            with second.lease(S, "reconcile"):
                pytest.fail("two runs of one source held it at once")
        with second.lease("other_shop", "sync"):  # another source is free
            pass
    message = str(refused.value)
    assert message.startswith(f"source {S} is busy: another run of it holds it (a sync since ")
    assert f"pid {os.getpid()} on " in message
    assert "this reconcile did not start" in message and "Run it again once" in message
    assert refused.value.source == S and refused.value.kind == "reconcile"

    with second.lease(S, "reconcile"):  # released when the first run ended
        with pytest.raises(SourceBusy):
            with first.lease(S, "sync"):
                pass


def test_a_run_may_wait_its_bound_for_the_source_and_is_told_whom_it_waits_for(
    open_store: OpenStore,
) -> None:
    first, second = open_store(), open_store()
    with first.lease(S, "sync"):
        with pytest.raises(SourceBusy, match=r"this audit did not start in 0\.3 s of waiting"):
            with second.lease(S, "audit", wait=0.3):
                pass

    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with first.lease(S, "sync"):
            holding.set()
            release.wait(60)

    told: list[str] = []

    def waiting(message: str) -> None:  # the first run ends once the second waits for it
        told.append(message)
        release.set()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(60)
    with second.lease(S, "reconcile", wait=60, waiting=waiting):
        pass
    holder.join(60)
    assert len(told) == 1 and told[0].startswith(
        f"waiting up to 60 s for source {S}: another run of it holds it (a sync since ")


def test_a_run_that_holds_its_source_may_take_it_again_within_itself(
    open_store: OpenStore,
) -> None:
    store = open_store()
    with store.lease(S, "audit"), store.lease(S, "sync"):  # an audit's re-send is a sync
        pass
    with store.lease(S, "sync"):  # and both let go
        pass


def test_a_run_whose_process_died_leaves_its_source_free(db_url: str) -> None:
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pipelines.engine.state import StateStore
        store = StateStore({db_url!r})
        with store.lease({S!r}, "sync"):
            print("held", flush=True)
            time.sleep(600)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with StateStore(db_url) as store:
            with pytest.raises(SourceBusy, match=f"pid {holder.pid} on "):
                with store.lease(S, "sync"):
                    pass
            holder.kill()  # no chance to let go: the OS or the server takes it back
            holder.wait(timeout=30)

            def taken() -> bool:
                try:
                    with store.lease(S, "sync"):
                        return True
                except SourceBusy:
                    return False

            eventually(taken, "the lease of a killed process, free", timeout=30)
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_syncs_reconciliations_and_audits_of_a_held_source_do_nothing(
    open_store: OpenStore,
) -> None:
    """Each is refused before it opens a connection: the shop and the API here answer
    nothing, so only the refusal can end them."""
    config = parse_config({
        "destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_LEASE_KEY"},
        "sources": [{"name": "shop_a", "platform": "woocommerce",
                     "connection": {"url": "http://127.0.0.1:9", "key_env": "T_LEASE_WC",
                                    "secret_env": "T_LEASE_WC"}}],
    })
    runner = SourceRunner(config, config.sources[0], open_store(),
                          env={"T_LEASE_KEY": "k", "T_LEASE_WC": "w"})
    with open_store().lease("shop_a", "backfill"):
        for run in (runner.run(["orders"]), runner.reconcile(), audit(runner)):
            with pytest.raises(SourceBusy, match="source shop_a is busy: .*a backfill since"):
                asyncio.run(run)
    assert runner.state.recent_runs("shop_a") == []
