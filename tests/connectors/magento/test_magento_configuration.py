"""The Magento connector's configuration: the REST root built from the URL and store code,
bad configurations and streams Magento cannot give refused before any request.
"""

from __future__ import annotations

import asyncio

import pytest

from connectors.sources.base import UnsupportedStream
from connectors.sources.magento import MagentoConnector
from tests.connectors.magento.support import connector

# configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "options", "root"), [
    ("https://shop.example", {}, "https://shop.example/rest/default"),
    ("https://shop.example/", {"store_code": "de"}, "https://shop.example/rest/de"),
    ("https://shop.example/rest/fr/V1/", {}, "https://shop.example/rest/fr"),
    ("https://shop.example/index.php/rest/all", {"store_code": "all"},
     "https://shop.example/index.php/rest/all"),
    ("http://127.0.0.1:8788/rest/default", {}, "http://127.0.0.1:8788/rest/default"),
])
def test_the_rest_root_is_built_from_the_url_and_store_code(url, options, root) -> None:
    assert MagentoConnector(url, "t", **options).config.base_url == root


@pytest.mark.parametrize(("url", "options", "problem"), [
    ("http://shop.example/rest/default", {}, "must use https"),
    ("https://shop.example/rest/fr", {"store_code": "de"}, "names store code 'fr'"),
    ("ftp://shop.example", {}, "http(s) URL"),
    ("https://shop.example", {"page_size": 301}, "less than or equal to 300"),
])
def test_bad_configurations_are_refused_before_any_request(url, options, problem) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        MagentoConnector(url, "t", **options)


def test_streams_magento_cannot_give_are_refused_with_the_reason(shop) -> None:
    source = connector(shop)
    with pytest.raises(UnsupportedStream, match="salesRules/search"):
        source.read("vouchers")
    with pytest.raises(UnsupportedStream, match="streams: orders"):
        source.read("refunds")
    asyncio.run(source.aclose())
