"""``check-config`` finds what the file points at that does not work (the state database,
the destination, the sources), before a run does, each connection bounded in time.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.engine.config_support import closed_port, write


@pytest.fixture
def checkable(sandbox, fresh_key, tmp_path):
    """A file whose destination is the sandbox and whose source is a file drop that exists;
    ``check(...)`` runs check-config on it with the state database and data source given."""
    (tmp_path / "drop" / "orders").mkdir(parents=True)
    env = {"CHECK_API_KEY": fresh_key()}

    def check(state_url=f"sqlite:///{tmp_path / 'state.db'}", data_source="{label: Drop}"):
        path = write(tmp_path, f"""
            destination: {{base_url: "{sandbox.base_url}", api_key_env: CHECK_API_KEY}}
            state_url: {state_url}
            sources:
              - name: drop
                platform: files
                connection:
                  path: {tmp_path / 'drop'}
                  streams: {{orders: {{key: id, columns: {{order_id: id}}}}}}
                data_source: {data_source}
            """)
        return CliRunner().invoke(main, ["check-config", "--config", str(path), "--timeout", "10"],
                                  env=env)

    return check


def test_check_config_confirms_the_state_database_the_destination_and_the_sources(checkable):
    result = checkable()

    assert result.exit_code == 0, result.output
    assert "ok    state database sqlite:///" in result.output
    assert "ok    destination http://" in result.output
    assert "ok    source drop: data source 'Drop' is created on the first sync" in result.output
    assert "ok    source drop (files " in result.output


def test_check_config_says_when_the_data_source_id_does_not_exist(checkable):
    result = checkable(data_source="{id: 7}")

    assert result.exit_code == 1
    assert ("FAIL  source drop: sources[0].data_source.id: no data source 7 at the destination;"
            " it has: ") in result.output


def test_check_config_opens_the_state_database(checkable, tmp_path):
    port = closed_port()
    unreachable = checkable(state_url=f"postgresql+psycopg://shopsync:pw@127.0.0.1:{port}/state")
    (tmp_path / "file").write_text("")
    not_a_folder = checkable(state_url=f"sqlite:///{tmp_path / 'file' / 'state.db'}")

    assert unreachable.exit_code == 1
    assert (f"FAIL  state database: state_url postgresql+psycopg://shopsync:***@127.0.0.1:{port}"
            "/state") in unreachable.output
    assert "Connection refused" in unreachable.output
    assert ":pw@" not in unreachable.output
    assert not_a_folder.exit_code == 1
    assert "FAIL  state database: state_url sqlite:///" in not_a_folder.output


def test_check_config_bounds_each_connection_in_time(tmp_path):
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    path = write(tmp_path, f"""
        destination: {{base_url: "{dead}", api_key_env: K}}
        state_url: sqlite:///{tmp_path / 'state.db'}
        sources:
          - name: drop
            platform: files
            connection:
              path: {tmp_path}
              streams: {{orders: {{key: id, columns: {{order_id: id}}}}}}
        """)
    result = CliRunner().invoke(main, ["check-config", "--config", str(path), "--timeout", "0.2"],
                                env={"K": "sandbox1.shopsync-local-key"})

    assert result.exit_code == 1
    assert (f"FAIL  destination: destination.base_url ({dead}): no answer within 0.2 s"
            in result.output)
