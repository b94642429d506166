"""Many clients at once: concurrent writers, readers and clock moves lose, duplicate and break
nothing, in memory and with ``--data``; every route and dependency runs on the event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter

import httpx
import pytest
from fastapi.dependencies.models import Dependant

from sandbox.serving import Served
from tests.sandbox.load import BATCH, hammer, stored_ids
from tests.sandbox.routes import api_routes

#: batches of 50 orders (7 500), 16 requests in flight, with 4 readers and the clock moving:
#: enough for dependencies run in worker threads to fail listings and lose writes, small
#: enough to take seconds (``python -m tests.sandbox.load`` runs other sizes by hand)
BATCHES = 150
DELAY = 1  # the visibility delay, on the sandbox's manual clock


@pytest.mark.parametrize("persisted", [False, True], ids=["in-memory", "data-file"])
def test_concurrent_writes_are_each_stored_once_with_no_error_or_drop(start, tmp_path, persisted):
    data = ["--data", str(tmp_path / "sandbox.sqlite")] if persisted else []
    running = start("--visibility-delay", str(DELAY), "--manual-clock", *data)

    seen = asyncio.run(hammer(running.root, batches=BATCHES, writers=16, readers=4,
                              clock_step=DELAY / 5))

    assert (seen.server_errors, dict(seen.dropped)) == (0, {}), seen.errors
    assert len(seen.accepted) == BATCHES * BATCH
    running.advance_clock(DELAY)
    client = running.client()
    assert stored_ids(client, seen.accepted) == Counter(dict.fromkeys(seen.accepted, 1))
    stats = client.get(running.root + "/_sandbox/stats").json()["data"]
    assert stats["pending"] == 0
    assert stats["stored"]["orders"] == stats["writes"]["orders"]["accepted"] == len(seen.accepted)


def test_a_client_gives_up_an_idle_connection_before_the_sandbox_closes_it(start):
    """Were both to wait about as long, a request sent on an idle connection could cross the
    server closing it, and the client would see the connection reset with no answer (the
    hammer above saw one ``ReadError`` so on a busy machine, with uvicorn's 5 s)."""
    running = start()
    assert isinstance(running.process, Served)

    kept = running.process.server.config.timeout_keep_alive

    assert kept >= 10 * httpx.Limits().keepalive_expiry


def _plain_defs(dependant: Dependant, where: str) -> list[str]:
    found = [] if dependant.call is None or inspect.iscoroutinefunction(dependant.call) else [
        f"{where}: {getattr(dependant.call, '__qualname__', dependant.call)}"]
    for sub in dependant.dependencies:
        found += _plain_defs(sub, where)
    return found


def test_no_route_or_dependency_would_run_in_a_worker_thread():
    """FastAPI runs a plain ``def`` beside the event loop, in a thread: the store is made
    for one thread (``http.py``)."""
    routes = api_routes()

    plain = [f for r in routes for f in _plain_defs(r.dependant, f"{r.methods} {r.path}")]

    assert len(routes) > 100
    assert plain == []
