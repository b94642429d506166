"""What the end-to-end engine tests (``test_sync_*.py``) share: a setup of one source
against a fresh shop of the session sandbox, and the source's records mapped outside the
engine, to compare with what the sandbox stored. The factory is the ``engine_setup``
fixture (``conftest.py``); each platform's driver (``drivers/``) subclasses ``EngineSetup``
with its fake's fields.
Time is the setup's ``clock``: a test moves it forward rather than waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

import httpx

from connectors.marketing.items import validate_item
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import RawRecord, SourceConnector
from pipelines.engine.config import Config, parse_config
from pipelines.engine.mappings.base import Item, MappingContext, PlatformMapping
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
from pipelines.engine.stream_report import StreamReport


@dataclass
class MovableClock:
    """The engine's clock in tests: the wall clock, which the fake shops' change times and
    the state store's timestamps follow, plus however far the test moved it forward — a
    test passes the settle margin or a deadline at once instead of sleeping through it."""

    ahead: timedelta = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead

    def advance(self, by: timedelta) -> None:
        self.ahead += by


@dataclass
class EngineSetup:
    """One configured source, its secrets, a state store of its own, a client of the
    sandbox shop it syncs to, and the clock its runs read time from."""

    config: Config
    env: dict[str, str]
    state: StateStore
    api: httpx.Client
    stats_url: str
    clock: MovableClock

    def runner(self) -> SourceRunner:
        return SourceRunner(self.config, self.config.sources[0], self.state, self.env,
                            self.clock)

    def run(self, **kwargs: Any) -> list[StreamReport]:
        return asyncio.run(self.runner().run(**kwargs))

    def run_by_stream(self, **kwargs: Any) -> dict[str, StreamReport]:
        return {r.stream: r for r in self.run(**kwargs)}

    def stats(self) -> dict[str, Any]:
        return self.api.get(self.stats_url).json()["data"]

    def accepted(self) -> dict[str, int]:
        """Items the sandbox accepted so far, per resource: what a run must not add to."""
        return {r: c.get("accepted", 0) for r, c in self.stats()["writes"].items()}

    def listed(self, route: str, **params: Any) -> list[dict[str, Any]]:
        return self.api.get(route, params={"limit": 1000, **params}).json()["data"]

    def stored(self, resource: str, route: str) -> dict[str, dict[str, Any]]:
        """The rows the sandbox lists at ``route``, by the resource's key."""
        return {row_key(resource, row): row for row in self.listed(route)}


S = TypeVar("S", bound=EngineSetup)


class MakeSetup(Protocol):
    """The ``engine_setup`` fixture: a ``kind`` of setup (``fields`` are its own, like the
    fake shop) for ``source`` as shops.yaml gives it, with the secrets ``env``."""

    def __call__(self, kind: type[S], source: Mapping[str, Any], *,
                 env: Mapping[str, str] | None = None, **fields: Any) -> S: ...


def row_key(resource: str, row: Mapping[str, Any]) -> str:
    """An item's or a stored row's identity within its resource."""
    return "|".join(str(row[f]) for f in SYNC_RESOURCES[resource].key_fields)


def without_nulls(item: Mapping[str, Any]) -> dict[str, Any]:
    """The values an item sends: the API leaves out nulls."""
    return {k: v for k, v in item.items() if v is not None}


def read_records(open_connector: Callable[[], SourceConnector], stream: str) -> list[RawRecord]:
    """Every record of ``stream``, read straight from the source (not through the engine),
    on a connector opened for this read and closed after it."""
    async def read() -> list[RawRecord]:
        connector = open_connector()
        try:
            return [r async for page in connector.read(stream) for r in page]
        finally:
            await connector.aclose()

    return asyncio.run(read())


def mapped_items(mapping: PlatformMapping, stream: str, records: list[RawRecord],
                 context: MappingContext) -> dict[str, dict[str, Item]]:
    """What ``records`` of ``stream`` become, the valid items only: resource -> key ->
    item — what a sync must leave at the destination."""
    out: dict[str, dict[str, Item]] = {}
    for record in records:
        for resource, item in mapping.map(stream, record, context):
            if not validate_item(SYNC_RESOURCES[resource].model, item):
                out.setdefault(resource, {})[row_key(resource, item)] = item
    return out


def assert_stored_as_mapped(stored: Mapping[str, Mapping[str, Any]],
                            expected: Mapping[str, Item], what: Any,
                            ignore: Collection[str] = ()) -> None:
    """The destination holds exactly the expected keys, each row with every non-null value
    of its item (but the fields in ``ignore``, which the API stores otherwise)."""
    assert set(stored) == set(expected), what
    for key, item in expected.items():
        sent = {f: v for f, v in without_nulls(item).items() if f not in ignore}
        assert {f: stored[key].get(f) for f in sent} == sent, (what, key)


def woo_runner(sandbox: Any, shop: Any, state_url: str, **source: Any) -> SourceRunner:
    """A runner of one WooCommerce fake shop into ``sandbox`` (any key opens a shop there),
    with a ledger at ``state_url`` and a clock the test moves."""
    config = parse_config({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_WOO_API_KEY"},
        "sources": [{
            "name": "woo", "platform": "woocommerce", "lookback_seconds": 0,
            "connection": {"url": shop.root, "key_env": "T_WOO_KEY", "secret_env": "T_WOO_SECRET"},
            **source,
        }],
    })
    env = {"T_WOO_API_KEY": "sandbox1.shopsync-local-key", "T_WOO_KEY": shop.key,
           "T_WOO_SECRET": shop.secret}
    return SourceRunner(config, config.sources[0], StateStore(state_url), env, MovableClock())
