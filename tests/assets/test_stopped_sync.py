"""In Dagster, a sync that stops because the destination is down is a failed step that says so
— since when, that nothing is lost, where the next run resumes — not a traceback; so is a
step of a source another run holds."""

from __future__ import annotations

import socket

import dagster as dg

from assets import concurrency
from pipelines.definitions import build_definitions
from pipelines.engine.config import parse_config
from pipelines.engine.state import StateStore
from sandbox.shops.woocommerce.launch import start_in_thread


def test_a_dead_destination_fails_the_step_with_the_message_and_where_it_resumes(
    tmp_path, monkeypatch
):
    with socket.socket() as probe:  # a free port, closed again: the destination is dead
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    shop = start_in_thread("--orders", "5", "--customers", "3", "--products", "2")
    monkeypatch.setenv("T_DG_API_KEY", "abcd1234.dead-destination")
    monkeypatch.setenv("T_DG_WC_KEY", shop.key)
    monkeypatch.setenv("T_DG_WC_SECRET", shop.secret)
    config = parse_config({
        "destination": {"base_url": dead, "api_key_env": "T_DG_API_KEY",
                        "down_after_seconds": 0.5},
        "state_url": f"sqlite:///{tmp_path / 'state.db'}",
        "sources": [{"name": "woo", "platform": "woocommerce", "history_start": "2025-01-01",
                     "connection": {"url": shop.root, "key_env": "T_DG_WC_KEY",
                                    "secret_env": "T_DG_WC_SECRET"}}],
    })
    defs = build_definitions(config)
    (orders,) = [a for a in defs.assets if dg.AssetKey(["woo", "orders"]) in a.keys]
    try:
        result = dg.materialize([orders], resources=dict(defs.resources), raise_on_error=False,
                                instance=dg.DagsterInstance.ephemeral())
    finally:
        shop.stop()

    assert not result.success
    (failure,) = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert data is not None, "a Failure with a description, not a bare exception"
    assert data.description.startswith(f"destination down: {dead} has answered no request since ")
    assert "nothing is lost" in data.description
    assert "which resumes orders from its beginning" in data.description
    assert data.metadata["stopped"].value == "destination down"
    assert data.metadata["resumes"].value == "orders from its beginning"
    assert "abcd1234.dead-destination" not in data.description


def test_a_source_held_by_another_run_fails_the_step_with_the_engines_message(
    tmp_path, monkeypatch
):
    """The command line syncs the source (it holds the source's lease): Dagster's sync and
    reconciliation steps of that source wait their bound, then fail with the engine's
    message, having done nothing (the shop and the API here answer nothing)."""
    monkeypatch.setattr(concurrency, "STEP_LEASE_WAIT", 0.2)
    config = parse_config({
        "destination": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "T_DG_API_KEY"},
        "state_url": f"sqlite:///{tmp_path / 'state.db'}",
        "sources": [{"name": "woo", "platform": "woocommerce",
                     "connection": {"url": "http://127.0.0.1:9", "key_env": "T_DG_WC_KEY",
                                    "secret_env": "T_DG_WC_SECRET"}}],
    })
    defs = build_definitions(config)
    steps = [a for a in defs.assets if {dg.AssetKey(["woo", "orders"]),
                                        dg.AssetKey(["woo", "reconciliation"])} & set(a.keys)]
    for name, value in {"T_DG_API_KEY": "abcd1234.held", "T_DG_WC_KEY": "k",
                        "T_DG_WC_SECRET": "s"}.items():
        monkeypatch.setenv(name, value)
    with StateStore(config.state_url or "") as state, state.lease("woo", "sync"):
        results = [dg.materialize([step], resources=dict(defs.resources), raise_on_error=False,
                                  instance=dg.DagsterInstance.ephemeral()) for step in steps]

    for result in results:
        (failure,) = result.get_step_failure_events()
        data = failure.step_failure_data.user_failure_data
        assert data is not None, "a Failure with a description, not a bare exception"
        assert data.description.startswith("source woo is busy: another run of it holds it"
                                           " (a sync since ")
        assert "did not start in 0.2 s of waiting" in data.description
        assert data.metadata["held by"].value.startswith("a sync since ")
