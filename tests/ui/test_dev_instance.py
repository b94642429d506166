"""``shopsync dev`` gives Dagster an instance of its own under ``$SHOPSYNC_HOME``: telemetry
off, every storage in that folder, and the code location named as ``workspace.yaml`` names it,
from wherever the command runs."""

from __future__ import annotations

import socket
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.run_coordinator import DefaultRunCoordinator

from pipelines.cli.demo import dev_home, ephemeral_ports, free_port, write_instance

PROJECT = Path(__file__).resolve().parents[2]


def test_each_platforms_demo_has_its_home_under_shopsync_home(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setenv("SHOPSYNC_HOME", str(tmp_path))
    assert dev_home("shopify") == tmp_path / "dev" / "shopify"


def test_the_instance_has_telemetry_off_launches_at_once_and_keeps_everything_in_its_home(
        tmp_path: Path) -> None:
    write_instance(tmp_path)

    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:  # Dagster accepts it
        assert instance.telemetry_enabled is False
        assert isinstance(instance.run_coordinator, DefaultRunCoordinator)  # no queue
        assert instance.get_runs() == []
    assert list((tmp_path / "storage").rglob("runs.db"))  # the run history is there


def test_the_location_is_the_one_workspace_yaml_names(tmp_path: Path) -> None:
    ours = yaml.safe_load(write_instance(tmp_path).read_text())["load_from"]
    project = yaml.safe_load((PROJECT / "workspace.yaml").read_text())["load_from"]

    def named(entries: list[dict[str, dict[str, str]]]) -> list[tuple[str, str]]:
        return [(e["python_module"]["module_name"], e["python_module"]["location_name"])
                for e in entries]

    assert named(ours) == named(project)


def test_the_uis_port_is_free_and_never_one_an_outgoing_connection_could_take() -> None:
    """The UI's process binds the port seconds after it is chosen: a port from the kernel's
    ephemeral range could meanwhile become the local port of any outgoing connection (the
    UI then failed with "address already in use", once under the suite's load)."""
    low, high = ephemeral_ports()
    ports = {free_port("127.0.0.1") for _ in range(20)}
    assert all(1024 <= port < low for port in ports), (ports, (low, high))
    for port in ports:
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))  # nothing else has it
