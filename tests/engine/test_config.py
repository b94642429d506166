"""shops.yaml: a good file loads; a bad one gets one message per problem, with the fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pipelines.engine.config import ConfigError, load_config
from pipelines.engine.runner import selected_resources

GOOD = """
destination:
  base_url: https://api.example.com/v1
  api_key_env: MARKETING_API_KEY
state_url: sqlite:///state.db
sources:
  - name: eu_shop
    platform: woocommerce
    connection: {url: https://shop.example.com, key_env: WC_KEY, secret_env: WC_SECRET}
    data_source: {label: WooCommerce EU}
    resources: [orders, customers]
    schedule: "*/10 * * * *"
    history_start: 2024-06-01
    mapping:
      customers: {set: {is_opt_in: true}, rename: {phone_number: billing.phone}}
"""


#: a source whose configuration defines its streams: customers and orders, no others
DEFINED = """
sources:
  - name: own
    platform: {platform}
    connection:
      {where}
      streams:
        customers: {{{table}key: id, columns: {{customer_id: id, email: email}}}}
        orders: {{{table}key: id, columns: {{order_id: id}}}}
"""
WHERE = {"sql": ("url: sqlite:////data/shop.db", "table: t, "),
         "files": ("path: /data/drop", "")}


def defined(platform: str, resources: str | None = None) -> str:
    where, table = WHERE[platform]
    text = DEFINED.format(platform=platform, where=where, table=table)
    return text if resources is None else text + f"    resources: {resources}\n"


def write(tmp_path, text):
    path = tmp_path / "shops.yaml"
    path.write_text(textwrap.dedent(text))
    return path


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
        (("api_key_env: MARKETING_API_KEY", "api_key_env: abcd1234.secret"),
         "destination.api_key_env: 'abcd1234.secret' is not an environment variable name"),
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
    ],
    ids=["base-url", "key-in-file", "platform", "name", "data-source", "date", "typo"],
)
def test_each_problem_names_the_field_and_the_fix(tmp_path, change, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, GOOD.replace(*change)))
    assert any(p.startswith(expected) for p in caught.value.problems), caught.value.problems


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
