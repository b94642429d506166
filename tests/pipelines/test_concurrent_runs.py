"""Two `shopsync sync` of one source started at the same moment, as two operators (or a cron
job and a person) would: exactly one syncs, the other is refused with one message naming the
source and the run that holds it, and the destination and the ledger hold every item once —
on SQLite and on PostgreSQL. The commands run as processes of their own, since the lease
is between processes; each imports what it needs, then waits on a barrier file, so both
reach the sync within milliseconds of each other however long their start took."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from pipelines.engine.state import ItemStatus, StateStore
from sandbox.shops.woocommerce.launch import RunningFakeShop, start_in_thread
from tests.engine import conftest as engine_fixtures
from tests.support import RunningSandbox, new_key, released_together

#: a fresh, empty ledger on SQLite and on PostgreSQL: the engine tests' fixture
db_url = engine_fixtures.db_url
ORDERS = 120
#: a bound far above the time a sync takes, so only a hang fails
BOUND = 120.0

#: `shopsync sync` once the barrier file (argv[1]) appears, after saying it is ready (argv[2])
AT_THE_BARRIER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import pipelines.cli, pipelines.engine.runner  # the slow part, before the barrier
    barrier, ready = Path(sys.argv[1]), Path(sys.argv[2])
    ready.touch()
    while not barrier.exists():
        time.sleep(0.002)
    sys.argv = ["shopsync", "sync"]
    pipelines.cli.main()
""")


@pytest.fixture(scope="module")
def shop() -> Iterator[RunningFakeShop]:
    running = start_in_thread("--orders", str(ORDERS), "--customers", "15", "--products", "8",
                              "--seed", "5")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def slow_sandbox(start_for_module: Callable[..., RunningSandbox]) -> RunningSandbox:
    """Each answer 40 ms late: a sync lasts seconds, far longer than the two processes take
    to leave the barrier, so the second always finds the first holding the source."""
    return start_for_module("--accept-any-key", "--visibility-delay", "0", "--latency", "40")


def test_two_syncs_of_one_source_at_once_one_syncs_the_other_is_refused(
    shop: RunningFakeShop, slow_sandbox: RunningSandbox, db_url: str, tmp_path: Path
) -> None:
    state_url = db_url
    key = new_key()
    config = tmp_path / "shops.yaml"
    config.write_text(textwrap.dedent(f"""
        destination: {{base_url: "{slow_sandbox.base_url}", api_key_env: T_API_KEY}}
        state_url: "{state_url}"
        sources:
          - name: woo
            platform: woocommerce
            connection: {{url: "{shop.root}", key_env: T_WC_KEY, secret_env: T_WC_SECRET}}
            lookback_seconds: 0
            tuning: {{chunk_items: 25, page_size: 25}}
    """))
    env = {**os.environ, "SHOPSYNC_CONFIG": str(config), "T_API_KEY": key,
           "T_WC_KEY": shop.key, "T_WC_SECRET": shop.secret, "PYTHONFAULTHANDLER": "1"}
    StateStore(state_url).close()  # the schema exists before either opens it
    codes, outputs, pids = released_together(
        [[sys.executable, "-c", AT_THE_BARRIER]] * 2, tmp_path, env=env, bound=BOUND)

    assert sorted(codes) == [0, 75], outputs
    synced, refused = (0, 1) if codes[0] == 0 else (1, 0)
    message = outputs[refused]
    pid = pids[synced]
    assert re.fullmatch(
        r"error: source woo is busy: another run of it holds it \(a sync since"
        rf" \S+ \S+Z, pid {pid} on \S+\), so this sync did not start and read or sent nothing"
        r" .*Run it again once that run has ended\..*\n", message, re.S), message
    assert "Traceback" not in message

    api = httpx.Client(base_url=slow_sandbox.base_url, headers={"spm-api-key": key})
    try:
        writes = api.get(f"{slow_sandbox.root}/_sandbox/stats").json()["data"]["writes"]
        listed = api.get("/orders", params={"limit": 1000}).json()["data"]
    finally:
        api.close()
    with StateStore(state_url) as state:
        counts = state.counts("woo")
        runs = state.recent_runs("woo", limit=100)
    shop_api = shop.client()
    at_source = sum(int(shop_api.get("/orders", params={"per_page": 1, "status": status})
                        .headers["X-WP-Total"]) for status in ("any", "trash"))
    accepted = ItemStatus.ACCEPTED.value
    # the ledger holds each order of the shop once (sent, or quarantined: never sent) …
    assert sum(counts["orders"].values()) == at_source
    # … and the destination each order sent once, and nothing was sent twice
    assert len({o["order_id"] for o in listed}) == len(listed) == counts["orders"][accepted]
    assert {r: w["accepted"] for r, w in writes.items()} == {
        r: c[accepted] for r, c in counts.items() if c.get(accepted)}
    # the refused command recorded no run: each stream ran once, and ended well
    assert sorted(r.resource for r in runs) == sorted({r.resource for r in runs})
    assert {r.status for r in runs} == {"succeeded"}
