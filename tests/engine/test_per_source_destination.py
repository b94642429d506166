"""Each source may write to its own destination (another API, another account): its items
land there only, and a source that names none writes to the global destination."""

from __future__ import annotations

import asyncio

import pytest
import yaml
from click.testing import CliRunner

from assets.secrets import secrets_for
from pipelines.cli import main
from pipelines.engine.config import ConfigError, parse_config
from pipelines.engine.runner import SourceRunner
from pipelines.engine.state import StateStore
from sandbox.shops.woocommerce.launch import start_in_thread
from tests.engine.config_support import closed_port
from tests.support import new_key


def source(name: str, shop_url: str, **more: object) -> dict[str, object]:
    return {"name": name, "platform": "woocommerce", "resources": ["categories", "products"],
            "connection": {"url": shop_url, "key_env": "T_PSD_WC_KEY",
                           "secret_env": "T_PSD_WC_SECRET"},
            "lookback_seconds": 0, **more}


def accepted(api) -> int:
    """Items the sandbox account behind ``api`` accepted, over every resource."""
    root = str(api.base_url).removesuffix("/v1/").removesuffix("/v1")
    writes = api.get(root + "/_sandbox/stats").json()["data"]["writes"]
    return sum(counts.get("accepted", 0) for counts in writes.values())


def test_each_source_lands_in_its_own_destination_and_the_rest_in_the_global_one(
        sandbox, start, tmp_path):
    other = start("--accept-any-key", "--visibility-delay", "0")  # another API
    shop = start_in_thread("--orders", "0", "--customers", "0", "--products", "6")
    keys = {"T_PSD_GLOBAL": new_key(), "T_PSD_OWN_API": new_key(), "T_PSD_OWN_KEY": new_key()}
    env = {**keys, "T_PSD_WC_KEY": shop.key, "T_PSD_WC_SECRET": shop.secret}
    try:
        config = parse_config({
            "destination": {"base_url": sandbox.base_url, "api_key_env": "T_PSD_GLOBAL"},
            "sources": [
                source("shared", shop.root),
                source("own_api", shop.root, destination={"base_url": other.base_url,
                                                          "api_key_env": "T_PSD_OWN_API"}),
                # only the key: another account of the global API
                source("own_key", shop.root, destination={"api_key_env": "T_PSD_OWN_KEY"}),
            ]})
        state = StateStore(f"sqlite:///{tmp_path / 'state.db'}")
        for name in ("shared", "own_api", "own_key"):
            asyncio.run(SourceRunner(config, config.source(name), state, env).run())
    finally:
        shop.stop()

    sent = {name: sum(c.get("accepted", 0) for c in state.counts(name).values())
            for name in ("shared", "own_api", "own_key")}
    assert all(sent.values()), sent
    assert accepted(sandbox.client(keys["T_PSD_GLOBAL"])) == sent["shared"]
    assert accepted(other.client(keys["T_PSD_OWN_API"])) == sent["own_api"]
    assert accepted(sandbox.client(keys["T_PSD_OWN_KEY"])) == sent["own_key"]
    # nothing of one source in another's account
    assert accepted(other.client(keys["T_PSD_GLOBAL"])) == 0
    assert accepted(sandbox.client(keys["T_PSD_OWN_API"])) == 0


def test_a_source_destination_takes_the_global_fields_it_does_not_name():
    config = parse_config({
        "destination": {"base_url": "https://api.example.com/v1", "api_key_env": "GLOBAL_KEY",
                        "write_carts": False, "down_after_seconds": 30},
        "sources": [source("plain", "https://shop.example.com"),
                    source("other", "https://shop.example.com",
                           destination={"api_key_env": "OTHER_KEY"})]})
    plain, other = config.sources

    assert config.destination_for(plain) == config.destination
    mine = config.destination_for(other)
    assert (mine.base_url, mine.api_key_env, mine.write_carts, mine.down_after_seconds) == (
        "https://api.example.com/v1", "OTHER_KEY", False, 30)
    # the Dagster resource of each source names its own destination's variable
    assert secrets_for(config, other).api_key.env_var_name == "OTHER_KEY"  # type: ignore[union-attr]
    assert secrets_for(config, plain).api_key.env_var_name == "GLOBAL_KEY"  # type: ignore[union-attr]


@pytest.mark.parametrize(("destination", "expected"), [
    ({"base_url": "https://api.example.com"},
     "sources[1].destination.base_url: must end with the API version prefix /v1"),
    ({"api_key_env": "other_key"},
     "sources[1].destination.api_key_env: the value of api_key_env is not an environment"
     " variable name"),
    ({"base_url": "http://api.example.com/v1"}, "sources[1].destination.base_url:"),
    ({"api_key": "abc"}, "sources[1].destination.api_key: Extra inputs are not permitted"
                         " — remove it (or check its spelling)"),
])
def test_a_bad_source_destination_is_named_with_its_fix(destination, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config({"sources": [source("a", "https://shop.example.com"),
                                  source("b", "https://shop.example.com",
                                         destination=destination)]})
    assert any(p.startswith(expected) for p in caught.value.problems), caught.value.problems


def test_a_missing_key_names_the_source_field_that_names_it(tmp_path):
    config = parse_config({"sources": [source("a", "https://shop.example.com",
                                              destination={"api_key_env": "T_PSD_UNSET"})]})
    runner = SourceRunner(config, config.sources[0],
                          StateStore(f"sqlite:///{tmp_path / 'state.db'}"), env={})
    with pytest.raises(ConfigError, match=r"sources\[0\]\.destination\.api_key_env: the"
                                          " environment variable T_PSD_UNSET is not set"):
        asyncio.run(runner.reconcile())


def test_check_config_tries_every_destination_and_names_the_source_field(sandbox, fresh_key,
                                                                         tmp_path):
    (tmp_path / "drop" / "orders").mkdir(parents=True)
    drop = {"path": str(tmp_path / "drop"),
            "streams": {"orders": {"key": "id", "columns": {"order_id": "id"}}}}
    path = tmp_path / "shops.yaml"
    path.write_text(yaml.safe_dump({
        "destination": {"base_url": sandbox.base_url, "api_key_env": "T_PSD_CHECK_KEY"},
        "state_url": f"sqlite:///{tmp_path / 'state.db'}",
        "sources": [
            {"name": "global", "platform": "files", "connection": drop},
            {"name": "elsewhere", "platform": "files", "connection": drop,
             "destination": {"base_url": f"http://127.0.0.1:{closed_port()}/v1"}},
        ]}))
    result = CliRunner().invoke(main, ["check-config", "--config", str(path), "--timeout", "5"],
                                env={"T_PSD_CHECK_KEY": fresh_key()})

    assert result.exit_code == 1, result.output
    assert f"ok    destination {sandbox.base_url}" in result.output
    assert "ok    source global: data source 'shopsync' is created" in result.output
    assert "FAIL  destination: sources[1].destination.base_url (http://127.0.0.1:" in result.output


def two_shops(first: dict, second: dict) -> dict:
    connection = {"url": "https://shop.example.com", "key_env": "K", "secret_env": "S"}
    return {"destination": {"base_url": "https://api.example.com/v1"},
            "sources": [{"name": "shop_a", "platform": "woocommerce", "connection": connection,
                         **first},
                        {"name": "shop_b", "platform": "woocommerce", "connection": connection,
                         **second}]}


def test_two_shops_writing_into_one_data_source_of_one_account_are_refused_naming_the_fix():
    with pytest.raises(ConfigError) as refused:
        parse_config(two_shops({}, {}))

    assert ("sources shop_a and shop_b write into the same data source ({'label': 'shopsync',"
            " 'type': 'api'}) of the same destination: their items of the same id would"
            " overwrite each other; give each its own, like `data_source: {label: shop_b}`"
            " under shop_b") in str(refused.value)


@pytest.mark.parametrize(("first", "second"), [
    ({}, {"data_source": {"label": "shop b"}}),  # a data source each
    ({}, {"destination": {"api_key_env": "OTHER_ACCOUNT_KEY"}}),  # an account each
    ({"resources": ["orders"]}, {"resources": ["products"]}),  # one shop over two sources
])
def test_shops_whose_items_cannot_meet_may_share_a_destination(first, second):
    assert len(parse_config(two_shops(first, second)).sources) == 2
