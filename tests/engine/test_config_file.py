"""shops.yaml: a good file loads; a bad one (or one that cannot be read) gets one message
per problem, with the fix.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.engine.config import ConfigError, load_config
from pipelines.engine.runner import selected_resources
from tests.engine.config_support import GOOD, defined, write


def test_a_good_file_loads(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    source = config.source("eu_shop")
    assert source.data_source.label == "WooCommerce EU"
    assert source.mapping["customers"].rename == {"phone_number": "billing.phone"}
    assert str(source.history_start) == "2024-06-01"


def test_the_path_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPSYNC_CONFIG", str(write(tmp_path, GOOD)))
    assert load_config().sources[0].name == "eu_shop"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("base_url: https://api.example.com/v1", "base_url: https://api.example.com"),
         "destination.base_url: must end with the API version prefix /v1"),
        (("api_key_env: MARKETING_API_KEY", "api_key_env: marketing_api_key"),
         "destination.api_key_env: the value of api_key_env is not an environment variable"
         " name"),
        (("platform: woocommerce", "platform: shopifi"),
         "sources[0].platform: unknown platform 'shopifi'; use one of:"),
        (("name: eu_shop", "name: EU Shop"),
         "sources[0].name: must be lowercase letters, digits and _"),
        (("data_source: {label: WooCommerce EU}", "data_source: {}"),
         "sources[0].data_source: give exactly one of `id` or `label`"),
        (("history_start: 2024-06-01", "history_start: last year"),
         "sources[0].history_start:"),
        (("schedule:", "schedul:"), ("sources[0].schedul: Extra inputs are not permitted"
          " — remove it (or check its spelling)")),
        (("history_start: 2024-06-01", "history_start: 2024-13-01"),
         "sources[0].history_start: Input should be a valid date or datetime, month value is"
         " outside expected range of 1-12 — use a date like 2024-01-31"),
        (('schedule: "*/10 * * * *"', 'schedule: "every 15 minutes"'),
         "sources[0].schedule: 'every 15 minutes' is not a cron expression;"
         ' e.g. "*/15 * * * *"'),
        (("state_url: sqlite:///state.db", "state_url: sqlite:///state.db\n"
          "reconciliation: {schedule: '0 0 30 2 *'}"),
         "reconciliation.schedule: '0 0 30 2 *' is not a cron expression"),
        (("base_url: https://api.example.com/v1", "base_url: http://api.example.com/v1"),
         "destination.base_url: base_url 'http://api.example.com/v1' must use https: the API"
         " key travels with every request"),
        (("state_url: sqlite:///state.db", "state_url: sqlite:///state.db\n"
          "alerts: {webhook_url: 'http://localhost.evil.example/hook'}"),
         "alerts.webhook_url: webhook_url 'http://localhost.evil.example/hook' must use https"),
        (("state_url: sqlite:///state.db", "state_url: state.db"),
         "state_url: not a SQLAlchemy URL; like sqlite:////var/lib/shopsync/state.db"),
        # pg8000: a PostgreSQL driver nothing installs (psycopg2 comes with dagster-postgres)
        (("state_url: sqlite:///state.db", "state_url: postgresql+pg8000://db.example.com/s"),
         "state_url: the driver of postgresql+pg8000 is not installed (No module named"
         " 'pg8000')"),
        (("state_url: sqlite:///state.db", "state_url: mysql+pymysql://db.example.com/s"),
         "state_url: the state store runs on SQLite or PostgreSQL, not 'mysql'"),
        (("rename: {phone_number: billing.phone}",
          "rename: {phone_number: billing.phone}, callable: 'no_such_pkg.mapping:fix'"),
         "sources[0].mapping.customers.callable: cannot import no_such_pkg.mapping:fix"
         " (ModuleNotFoundError: No module named 'no_such_pkg')"),
    ],
    ids=["base-url", "not-a-name", "platform", "name", "data-source", "date", "typo",
         "month-13", "cron", "february-30", "plain-http", "webhook-off-loopback",
         "state-not-a-url", "state-driver-missing", "state-not-sql", "callable-missing"],
)
def test_each_problem_names_the_field_and_the_fix(tmp_path, change, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, GOOD.replace(*change)))
    assert any(p.startswith(expected) for p in caught.value.problems), caught.value.problems


def test_addresses_with_credentials_can_come_from_named_environment_variables(tmp_path):
    named = GOOD.replace("state_url: sqlite:///state.db", "state_url_env: STATE_URL\n"
                         "alerts: {webhook_url_env: ALERTS_HOOK}")
    config = load_config(write(tmp_path, named))
    assert (config.state_url_env, config.alerts.webhook_url_env) == ("STATE_URL", "ALERTS_HOOK")
    url = "postgresql+psycopg://shopsync:pw@db.example.com/state"
    assert config.state_url_in({"STATE_URL": url}) == url
    with pytest.raises(ConfigError, match="state_url_env: the environment variable STATE_URL"
                                          " is not set — export it"):
        config.state_url_in({})
    with pytest.raises(ConfigError) as caught:
        config.state_url_in({"STATE_URL": "mysql+pymysql://shopsync:pw@db.example.com/s"})
    assert caught.value.problems[0].startswith("state_url_env: STATE_URL: the state store runs"
                                               " on SQLite or PostgreSQL")
    assert "pw" not in str(caught.value)
    assert load_config(write(tmp_path, GOOD)).state_url_in({}) == "sqlite:///state.db"

    for both, problem in [
        ("state_url: sqlite:///state.db\nstate_url_env: STATE_URL",
         "file: give state_url or state_url_env (the variable that holds it), not both"),
        ("alerts: {webhook_url: 'https://hooks.example.com/x', webhook_url_env: ALERTS_HOOK}",
         "alerts: give webhook_url or webhook_url_env (the variable that holds it), not both"),
    ]:
        with pytest.raises(ConfigError) as caught:
            load_config(write(tmp_path, GOOD.replace("state_url: sqlite:///state.db", both)))
        assert caught.value.problems == [problem]
    pasted = GOOD.replace("state_url: sqlite:///state.db",
                          "state_url_env: postgresql://shopsync:s3cr3tpw@db/state")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, pasted))
    assert caught.value.problems[0].startswith("state_url_env: the value of state_url_env looks"
                                               " like a key, not a variable name")
    assert "s3cr3tpw" not in str(caught.value)


def test_all_problems_are_reported_at_once(tmp_path):
    bad = GOOD.replace("platform: woocommerce", "platform: x").replace(
        "api_key_env: MARKETING_API_KEY", "api_key_env: not-a-name")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, bad))
    assert len(caught.value.problems) == 2


def test_a_platform_says_what_its_connection_needs(tmp_path):
    bad = GOOD.replace("url: https://shop.example.com, key_env: WC_KEY, secret_env: WC_SECRET",
                       "url: shop.example.com")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, bad))
    assert caught.value.problems == [
        ("sources[0].connection.url: the shop's http(s) address is required, like"
         " https://shop.example.com"),
        "sources[0].connection.key_env: name the environment variable holding the consumer key",
        ("sources[0].connection.secret_env: name the environment variable holding the consumer"
         " secret"),
    ]


def test_a_missing_file_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "nope.yaml")
    assert "pass --config PATH or set SHOPSYNC_CONFIG" in caught.value.problems[0]


def test_the_cli_prints_problems_without_a_traceback(tmp_path):
    path = write(tmp_path, GOOD.replace("platform: woocommerce", "platform: x"))
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "check-config", "--config",
                           str(path)], capture_output=True, check=False, text=True, timeout=60)
    assert done.returncode == 2
    assert "sources[0].platform" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("platform", ["sql", "files"])
@pytest.mark.parametrize("resources", [None, "[all]"], ids=["left-out", "all"])
def test_all_on_a_sql_or_files_source_means_the_resources_its_streams_feed(
    tmp_path, platform, resources
):
    source = load_config(write(tmp_path, defined(platform, resources))).sources[0]
    assert selected_resources(source) == {"customers": ["customers"], "orders": ["orders"]}


@pytest.mark.parametrize("platform", ["sql", "files"])
def test_a_listed_resource_no_stream_feeds_names_the_field_and_the_fix(tmp_path, platform):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, defined(platform, "[orders, products, vouchers]")))
    assert caught.value.problems == [
        ("sources[0].resources: no stream of connection.streams feeds products, vouchers —"
         " define a stream for each, or list only resources that have one (resources:"
         " [customers, orders]; `all` means every defined stream)")]


def test_a_key_pasted_for_a_variable_name_is_never_echoed(tmp_path):
    path = write(tmp_path, GOOD.replace("api_key_env: MARKETING_API_KEY",
                                        "api_key_env: sandbox1.do-not-show-me"))
    result = CliRunner().invoke(main, ["check-config", "--config", str(path)])

    assert result.exit_code == 2
    assert ("destination.api_key_env: the value of api_key_env looks like a key, not a variable"
            " name") in result.output
    assert "do-not-show-me" not in result.output


def fixer_module(tmp_path, monkeypatch, code):
    (tmp_path / "shop_fixes.py").write_text(textwrap.dedent(code))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("shop_fixes", None)
    return GOOD.replace("rename: {phone_number: billing.phone}",
                        "rename: {phone_number: billing.phone}, callable: 'shop_fixes:fix'")


def test_a_mapping_callable_must_take_the_item_and_the_record(tmp_path, monkeypatch):
    wrong = fixer_module(tmp_path, monkeypatch, "def fix(item):\n    return item\n")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, wrong))
    assert caught.value.problems == [
        "sources[0].mapping.customers.callable: shop_fixes:fix(item) must take two arguments,"
        " (item, record), and return the item"]

    right = fixer_module(tmp_path, monkeypatch, "def fix(item, record):\n    return item\n")
    assert load_config(write(tmp_path, right)).sources[0].mapping["customers"].callable


@pytest.mark.parametrize(("content", "expected"), [
    (GOOD.replace("WooCommerce EU", "Boutique \xe9t\xe9").encode("latin-1"),
     "file: not UTF-8 text (byte 0xe9 at offset"),
    (b"sources: [\n  - {name: x",
     "file: not valid YAML at line 2, column 3: expected the node content"),
    (b"sources: " + b"[" * 5000 + b"]" * 5000, "file: nested too deeply to read"),
], ids=["latin-1", "broken-yaml", "deep"])
def test_a_file_that_cannot_be_read_is_named_in_one_line(tmp_path, content, expected):
    path = tmp_path / "shops.yaml"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["check-config", "--config", str(path)])

    assert result.exit_code == 2, result.output
    assert f"error: {path}: 1 problem(s)" in result.output
    assert expected in result.output
    assert "Traceback" not in result.output


def test_a_folder_in_place_of_the_file_is_named(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.problems == [f"file: cannot read {tmp_path}: Is a directory"]
