"""``shopsync fake-shop shopify``."""

from __future__ import annotations

import click

from sandbox.shops.cli import hosting_options, listen_options, size_options


@click.command("shopify")
@listen_options(default_port=8789)
@size_options()
@click.option("--checkouts", default=None, type=click.IntRange(min=0),
              help="Abandoned checkouts (default: a quarter of the orders).")
@click.option("--timezone", default="Europe/Paris", show_default=True,
              help="The shop's timezone: search dates without an offset are read in it.")
@click.option("--bucket-size", default=2000.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="The app's cost bucket, in points (Standard plan: 2000).")
@click.option("--restore-rate", default=100.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Points restored per second (Standard 100, Advanced 200, Plus 1000).")
@click.option("--max-query-cost", default=1000, show_default=True, type=click.IntRange(min=1),
              help="The most one query may request before MAX_COST_EXCEEDED.")
@click.option("--bulk-latency", default=0.3, show_default=True, type=click.FloatRange(min=0),
              help="Seconds before a bulk operation runs.")
@click.option("--bulk-objects-per-second", default=5000.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="How fast a bulk operation writes its JSONL.")
@click.option("--bulk-concurrency", default=1, show_default=True, type=click.IntRange(1, 5),
              help="Bulk query operations an app may run at once (5 from API 2026-01).")
@hosting_options("502, 503, 500 or INTERNAL_SERVER_ERROR", retried="503")
@click.option("--token", default="shpat_shopsync_fake", show_default=True,
              help="The Admin API access token the fake accepts.")
def command(**options: object) -> None:
    """Serve a fake Shopify shop: the Admin GraphQL API at /admin/api/VERSION/graphql.json
    (X-Shopify-Access-Token shpat_shopsync_fake) plus /__fake__ to change records."""
    from sandbox.shops.shopify.launch import LAUNCHER

    LAUNCHER.run(options)
