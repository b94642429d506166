"""One shops.yaml with a source of every platform, synced in one Dagster run."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg
import pytest

from pipelines.definitions import build_definitions
from pipelines.demo import start_servers
from pipelines.demo_specs import demo_spec
from pipelines.engine.config import parse_config
from pipelines.engine.platforms import names
from pipelines.engine.state import StateStore

#: the platforms whose fake is an HTTP server: served in a thread of the test (the run, not
#: the servers' processes, is what this test is about); the others are made by their command
SERVED = ("woocommerce", "prestashop", "magento", "shopify")


@dataclass
class Fake:
    url: str
    stop: Callable[[], None]


@pytest.fixture
def fakes():
    """A fake shop of every platform: those that can be served in a thread of the test, the
    others as processes started at once."""
    started: dict[str, Fake] = {}
    try:
        own_process = []
        for name in names():
            spec = demo_spec(name)  # every platform has a demo fake
            sizes = spec.sizes(40, 15, 8)
            if name in SERVED:
                launch = importlib.import_module(f"sandbox.shops.{name}.launch")
                shop = launch.start_in_thread(*sizes)
                started[name] = Fake(shop.root, shop.stop)
            else:
                own_process.append((name, ([*spec.command, "--port", "0", *sizes], spec.banner)))
        servers = start_servers(*(command for _, command in own_process))
        for (name, _), server in zip(own_process, servers, strict=True):
            started[name] = Fake(server.url, server.stop)
        yield started
    finally:
        for fake in started.values():
            fake.stop()


def test_a_source_of_every_platform_syncs_in_one_dagster_run(sandbox, fresh_key, fakes,
                                                             tmp_path, monkeypatch):
    state_url = f"sqlite:///{tmp_path / 'state.db'}"
    sources = []
    for name, fake in fakes.items():
        spec = demo_spec(name)
        for variable, value in spec.env.items():
            monkeypatch.setenv(variable, value)
        sources.append({"name": f"{name}_shop", "platform": name,
                        "connection": spec.connection(fake.url), "lookback_seconds": 0,
                        "resources": ["orders"],
                        "data_source": {"label": f"{name} shop"}})
    monkeypatch.setenv("MIXED_API_KEY", fresh_key())
    config = parse_config({"destination": {"base_url": sandbox.base_url,
                                           "api_key_env": "MIXED_API_KEY"},
                           "state_url": state_url, "sources": sources})
    defs = build_definitions(config)
    synced = [a for a in defs.assets
              if not any(k.path[-1] == "reconciliation" for k in a.keys)]

    result = dg.materialize(synced, resources=dict(defs.resources),
                            instance=dg.DagsterInstance.ephemeral())

    assert result.success
    materialized = {e.asset_key.path[0] for e in result.get_asset_materialization_events()}
    assert materialized == {f"{name}_shop" for name in fakes}
    state = StateStore(state_url)
    for name in fakes:
        counts = state.counts(f"{name}_shop")
        assert sum(c.get("accepted", 0) for c in counts.values()) > 0, name
        assert counts["orders"]["accepted"] > 0, name
    state.close()
