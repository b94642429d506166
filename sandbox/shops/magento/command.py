"""``shopsync fake-shop magento``."""

from __future__ import annotations

from sandbox.shops.cli import hosting_options, options, serving
from sandbox.shops.magento.settings import FakeMagentoSettings

command = serving(
    "magento", FakeMagentoSettings,
    """Serve a fake Magento 2 shop: REST API at /rest/<store>/V1 (bearer token
    shopsync-fake-magento-token) plus /__fake__ to change records between reads.""",
    options(
        FakeMagentoSettings, customers="Customers to generate.", orders="Orders to generate.",
        products="Products to generate (configurable ones get child products on top).",
        carts="Active carts (quotes) to generate  [default: a quarter of the orders].",
        store_code="The store view code served at /rest/<code>/V1.",
        timezone="The store's timezone (the admin shows it; the REST API answers UTC).",
        past_end="A page past the end: the last page again (Magento 2.0-2.3) or no items (2.4).",
        max_page_size="Turn the Web API input limits on: refuse pageSize > N, 20 when absent.",
        integration_bearer="Refuse the integration token as a bearer token (Magento 2.4.4+"
                           " default)."),
    hosting_options("429, or an HTML 502/503/504/403 page",
                    rate_limit="the CDN/WAF in front of the shop; default: no limit"))
