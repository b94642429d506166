"""Safeguards around the configured things: the state database readable by its owner only,
no alert posted to plain HTTP off loopback, and a busy port or a state database that cannot
be opened said in one line.
"""

from __future__ import annotations

import logging
import socket
import stat

import pytest
from click.testing import CliRunner

from assets.alerts import deliver
from pipelines.cli import main
from pipelines.engine.state import StateStore
from tests.engine.config_support import GOOD, closed_port, write


def test_the_state_database_is_created_readable_by_its_owner_only(tmp_path):
    folder = tmp_path / "home" / "shopsync"
    store = StateStore(f"sqlite:///{folder / 'state.db'}")
    store.record("s", "orders", [])  # a write: the journal files exist while it is open
    try:
        modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in folder.iterdir()}
    finally:
        store.close()

    assert modes["state.db"] == 0o600
    assert set(modes.values()) == {0o600}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700


def test_an_alert_is_never_posted_to_plain_http_off_loopback(caplog):
    with caplog.at_level(logging.WARNING):
        deliver(["3 items parked"], "http://localhost.evil.example/hook", logging.getLogger("t"))

    assert ("the alert was not posted: webhook_url 'http://localhost.evil.example/hook' must use"
            " https") in caplog.text


@pytest.mark.parametrize("command", [["sandbox"], ["fake-shop", "woocommerce"]])
def test_a_busy_port_is_one_line_naming_the_option(command):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, [*command, "--port", str(port)])

    assert result.exit_code == 1
    assert result.output == (f"Error: port {port} on 127.0.0.1 is already in use: pick another"
                             " with --port (0: any free port), or stop what listens there\n")


def test_a_command_whose_state_database_cannot_be_opened_says_so_in_one_line(tmp_path):
    port = closed_port()
    path = write(tmp_path, GOOD.replace(
        "state_url: sqlite:///state.db",
        f"state_url: postgresql+psycopg://shopsync:pw@127.0.0.1:{port}/state"))
    result = CliRunner().invoke(main, ["status", "--config", str(path)])

    assert result.exit_code == 1
    assert result.output.startswith("error: the state database (state_url): connection failed")
    assert len(result.output.splitlines()) == 1
    assert "pw" not in result.output
