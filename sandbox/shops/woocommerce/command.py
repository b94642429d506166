"""``shopsync fake-shop woocommerce``."""

from __future__ import annotations

from sandbox.shops.cli import hosting_options, options, serving
from sandbox.shops.woocommerce.settings import FakeWooSettings

command = serving(
    "woocommerce", FakeWooSettings,
    """Serve a fake WooCommerce shop: REST API v3 at /wp-json/wc/v3 (key ck_shopsync_fake,
    secret cs_shopsync_fake) plus /__fake__ to change records between reads.""",
    options(
        FakeWooSettings, customers="Registered customers to generate.",
        orders="Orders to generate (100 000 start in a couple of seconds).",
        products="Products to generate (variable ones get variations on top).",
        timezone="The site's timezone: naive filter dates are read in it unless dates_are_gmt."),
    hosting_options("429, 503 or an HTML 502/403 page", rate_limit="default: no limit"))
