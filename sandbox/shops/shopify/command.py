"""``shopsync fake-shop shopify``."""

from __future__ import annotations

from sandbox.shops.cli import hosting_options, options, serving
from sandbox.shops.shopify.settings import FakeShopifySettings

command = serving(
    "shopify", FakeShopifySettings,
    """Serve a fake Shopify shop: the Admin GraphQL API at /admin/api/VERSION/graphql.json
    (X-Shopify-Access-Token shpat_shopsync_fake) plus /__fake__ to change records.""",
    options(
        FakeShopifySettings, customers=None, orders=None, products=None,
        checkouts="Abandoned checkouts (default: a quarter of the orders).",
        timezone="The shop's timezone: search dates without an offset are read in it."),
    options(  # the cost bucket: how much the app may query
        FakeShopifySettings,
        bucket_size="The app's cost bucket, in points (Standard plan: 2000).",
        restore_rate="Points restored per second (Standard 100, Advanced 200, Plus 1000).",
        max_query_cost="The most one query may request before MAX_COST_EXCEEDED."),
    options(  # bulk operations
        FakeShopifySettings, bulk_latency="Seconds before a bulk operation runs.",
        bulk_objects_per_second="How fast a bulk operation writes its JSONL.",
        bulk_concurrency="Bulk query operations an app may run at once (5 from API 2026-01)."),
    hosting_options("502, 503, 500 or INTERNAL_SERVER_ERROR", retried="503"),
    options(FakeShopifySettings, token="The Admin API access token the fake accepts."))
