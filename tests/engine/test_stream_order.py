"""The order ``shopsync sync`` syncs a source's streams in follows the table of who refers
to whom (``connectors/marketing/references.py``): what an item points at is sent first."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from connectors.marketing.references import stream_order, upstream
from pipelines.demo import demo_config
from pipelines.engine.config import parse_config
from pipelines.engine.platforms import names, platform
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore


def sent_before_its_reference(plan: Mapping[str, Sequence[str]]) -> list[str]:
    """What ``plan`` (stream -> resources, as synced) sends before what it refers to."""
    sent = [r for resources in plan.values() for r in resources]
    return [f"{r} before {u}" for i, r in enumerate(sent) for u in upstream(r)
            if u in sent and u not in sent[:i]]


@pytest.fixture
def state(tmp_path: Path) -> StateStore:
    return StateStore(f"sqlite:///{tmp_path / 'state.db'}")


@pytest.mark.parametrize("platform", names())
def test_every_platform_syncs_reference_data_first(platform: str, state: StateStore,
                                                   tmp_path: Path) -> None:
    shop = f"sqlite:///{tmp_path / 'shop.db'}" if platform == "sql" else (
        str(tmp_path) if platform == "files" else "http://127.0.0.1:8788")
    config = demo_config(shop_url=shop, platform_name=platform)
    runner = SourceRunner(config, config.sources[0], state)

    plan = runner.plan()

    assert "orders" in plan["orders"]
    assert sent_before_its_reference(plan) == []


def test_the_order_of_a_sql_sources_streams_is_not_the_order_they_are_defined_in(
    state: StateStore, tmp_path: Path
) -> None:
    stream = {"table": "t", "key": "id"}
    config = parse_config({
        "destination": {"base_url": "http://127.0.0.1:1/v1", "api_key_env": "K"},
        "sources": [{
            "name": "db", "platform": "sql",
            "connection": {"url": f"sqlite:///{tmp_path / 'shop.db'}",
                           "streams": {"orders": stream, "vouchers": stream, "carts": stream,
                                       "customers": stream, "groups": stream}},
        }],
    })

    plan = SourceRunner(config, config.sources[0], state).plan()

    assert list(plan) == ["groups", "customers", "vouchers", "carts", "orders"]


@pytest.mark.parametrize("name", names())
def test_the_order_comes_from_the_table_alone_not_from_how_the_streams_are_listed(
    name: str,
) -> None:
    produces = platform(name).mapping().produces
    shuffle = random.Random(13)
    for _ in range(20):
        listing = [(s, shuffle.sample(rs, len(rs))) for s, rs in produces.items()]
        shuffle.shuffle(listing)

        assert list(stream_order(dict(listing)).items()) == list(produces.items())
    assert sent_before_its_reference(produces) == []
