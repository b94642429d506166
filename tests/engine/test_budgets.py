"""The engine's shared request budgets (``pipelines/engine/budgets.py``): pacers of several
"processes" on one state database send one interval apart all together, as arithmetic on
the test's clock; which budget a source and a destination get, and none (no database
round-trip) where none is configured."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pipelines.engine.budgets import SharedPacer, destination_pacer, shop_pacer
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
from pipelines.engine.state.budgets import Slots

T = TypeVar("T")


class Time:
    """Virtual time: the clock moves only when every task sleeps (or the test moves it),
    to the earliest wake-up, so each sleeper wakes exactly when it asked to."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), woken))
        await woken

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        async def ticking() -> T:
            task = asyncio.ensure_future(main)
            while not task.done():
                for _ in range(20):  # no threads, no I/O: every task that can run has run
                    await asyncio.sleep(0)
                if self._sleepers and not task.done():
                    at, _, woken = heapq.heappop(self._sleepers)
                    self.now = max(self.now, at)
                    woken.set_result(None)
            return task.result()

        return asyncio.run(ticking())


async def inline(call: Callable[..., Slots], *args: Any) -> Slots:
    """The reservation in the event loop's thread: the test's time has no threads."""
    return call(*args)


def pacer(slots: Any, time: Time, rate: float, block: int | None = None) -> SharedPacer:
    return SharedPacer(slots, "shop https://a.example", rate, block=block, clock=time,
                       sleep=time.sleep, offload=inline)


class OnTheTestsClock:
    """The store's slots, on the test's clock instead of the database's."""

    def __init__(self, store: StateStore, time: Time) -> None:
        self.store, self.time, self.reservations = store, time, 0

    def reserve_slots(self, budget: str, interval: float, count: int = 1, *,
                      now: float | None = None) -> Slots:
        self.reservations += 1
        return self.store.reserve_slots(budget, interval, count, now=self.time())


@pytest.fixture
def state(tmp_path: Path) -> Any:
    store = StateStore(f"sqlite:///{tmp_path / 'state.db'}")
    yield store
    store.close()


async def send_all(pacers: list[SharedPacer], time: Time, each: int) -> list[float]:
    """Every pacer sends ``each`` requests, all at once; when each left."""
    sent: list[float] = []

    async def one(pacer: SharedPacer) -> None:
        for _ in range(each):
            await pacer.wait()
            sent.append(time.now)

    await asyncio.gather(*(one(p) for p in pacers))
    return sorted(sent)


@pytest.mark.parametrize("block", [1, 3])
def test_processes_sharing_a_budget_send_one_interval_apart_together(
    state: StateStore, block: int
) -> None:
    time = Time()
    # three "processes": pacers of their own, on one database
    pacers = [pacer(OnTheTestsClock(state, time), time, 20, block) for _ in range(3)]
    sent = time.run(send_all(pacers, time, 6))
    # one interval apart all together, none early, none wasted
    assert sent == pytest.approx([1000.0 + k * 0.05 for k in range(18)], abs=1e-9)


def test_a_block_reserves_once_for_several_requests_and_drops_the_slots_that_passed(
    state: StateStore,
) -> None:
    time = Time()
    slots = OnTheTestsClock(state, time)
    paced = pacer(slots, time, 10, block=4)
    sent = time.run(send_all([paced], time, 4))
    assert slots.reservations == 1
    assert sent == pytest.approx([1000.0, 1000.1, 1000.2, 1000.3], abs=1e-9)

    async def late() -> float:
        await paced.wait()  # reserves 1000.4 … 1000.7
        time.now += 0.35  # busy elsewhere until 1000.75: 1000.5 and 1000.6 passed long ago
        await paced.wait()  # 1000.7 (passed less than an interval ago) is still used
        await paced.wait()
        return time.now

    assert time.run(late()) == pytest.approx(1000.8, abs=1e-9), "a new block: 1000.8 …"
    assert slots.reservations == 3


def test_the_block_grows_with_the_rate_so_reservations_stay_few() -> None:
    assert SharedPacer(None, "b", 10).block == 1  # type: ignore[arg-type]
    assert SharedPacer(None, "b", 500).block == 10  # type: ignore[arg-type]


def config(destination: dict[str, Any] | None = None, **options: Any) -> Any:
    return parse_config({
        "destination": {"api_key_env": "T_KEY", **(destination or {})},
        "sources": [{"name": "woo", "platform": "woocommerce",
                     "connection": {"url": "https://shop.example/", "key_env": "K",
                                    "secret_env": "S", "options": options}}],
    })


class NoRoundTrip:
    def reserve_slots(self, *args: Any, **kwargs: Any) -> Slots:
        raise AssertionError("no budget is configured: the database is not asked")


def test_budgets_are_keyed_by_address_and_key_variable_never_by_the_key() -> None:
    configured = config({"requests_per_second": 40}, requests_per_second=5)
    shop = shop_pacer(NoRoundTrip(), configured.sources[0])
    assert shop is not None
    assert (shop.budget, shop.interval) == ("shop https://shop.example", 0.2)
    destination = destination_pacer(NoRoundTrip(), configured.destination)
    assert destination is not None
    assert destination.budget == "destination http://127.0.0.1:8787/v1 T_KEY"
    assert destination.interval == 1 / 40


def test_without_a_budget_no_pacer_is_made_and_the_database_is_not_asked() -> None:
    plain = config()
    assert shop_pacer(NoRoundTrip(), plain.sources[0]) is None
    assert destination_pacer(NoRoundTrip(), plain.destination) is None
    runner = SourceRunner(plain, plain.sources[0], NoRoundTrip(),  # type: ignore[arg-type]
                          env={"K": "ck_x", "S": "cs_x", "T_KEY": "a1b2c3d4.secret"})

    async def paced() -> None:
        connector, client = runner.open_connector(), runner.open_client()
        await connector.client.pacer.wait()  # type: ignore[attr-defined]
        await client.transport.pacer.wait()
        await connector.aclose()
        await client.aclose()

    asyncio.run(paced())


def test_the_engine_hands_the_shared_budgets_to_the_clients() -> None:
    configured = config({"requests_per_second": 40}, requests_per_second=5)
    runner = SourceRunner(configured, configured.sources[0], NoRoundTrip(),  # type: ignore[arg-type]
                          env={"K": "ck_x", "S": "cs_x", "T_KEY": "a1b2c3d4.secret"})
    connector, client = runner.open_connector(), runner.open_client()
    try:
        assert isinstance(connector.client.pacer, SharedPacer)  # type: ignore[attr-defined]
        assert connector.client.pacer.budget == "shop https://shop.example"  # type: ignore[attr-defined]
        assert isinstance(client.transport.pacer, SharedPacer)
        assert client.transport.pacer.interval == 1 / 40
    finally:
        asyncio.run(connector.aclose())
        asyncio.run(client.aclose())


def test_a_destination_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="requests_per_second"):
        config({"requests_per_second": 0})
