"""The fake WooCommerce shop's settings, as given on the command line or by a test."""

from __future__ import annotations

from sandbox.shops.settings import HostedShopSettings

#: the credentials the fake accepts unless told otherwise (documented in the README)
DEFAULT_CONSUMER_KEY = "ck_shopsync_fake"
DEFAULT_CONSUMER_SECRET = "cs_shopsync_fake"
API_PREFIX = "/wp-json/wc/v3"


class FakeWooSettings(HostedShopSettings):
    """The shared fields (port 8788; ``timezone`` is the WordPress site's: naive filter dates
    are read in it unless dates_are_gmt), and WooCommerce's REST API key."""

    consumer_key: str = DEFAULT_CONSUMER_KEY
    consumer_secret: str = DEFAULT_CONSUMER_SECRET
    currency: str = "EUR"
