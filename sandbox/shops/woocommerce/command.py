"""``shopsync fake-shop woocommerce``."""

from __future__ import annotations

import click

from sandbox.shops.cli import listen_options, settings_or_exit


@click.command("woocommerce")
@listen_options(default_port=8788)
@click.option("--customers", default=50, show_default=True, type=click.IntRange(min=0),
              help="Registered customers to generate.")
@click.option("--orders", default=200, show_default=True, type=click.IntRange(min=0),
              help="Orders to generate (100 000 start in a couple of seconds).")
@click.option("--products", default=30, show_default=True, type=click.IntRange(min=0),
              help="Products to generate (variable ones get variations on top).")
@click.option("--timezone", default="Europe/Paris", show_default=True,
              help="The site's timezone: naive filter dates are read in it unless dates_are_gmt.")
@click.option("--rate-limit", default=None, type=click.FloatRange(min=0, min_open=True),
              metavar="N", help="Requests per second before answering 429 with Retry-After"
              " (default: no limit).")
@click.option("--fault-rate", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Share of API requests answered 429, 503 or an HTML 502/403 page.")
@click.option("--retry-after", default=1, show_default=True, type=click.IntRange(min=0),
              metavar="SECONDS", help="Retry-After of injected 429 and 503 answers.")
def command(**options: object) -> None:
    """Serve a fake WooCommerce shop: REST API v3 at /wp-json/wc/v3 (key ck_shopsync_fake,
    secret cs_shopsync_fake) plus /__fake__ to change records between reads."""
    from sandbox.shops.woocommerce.serve import serve
    from sandbox.shops.woocommerce.settings import FakeWooSettings

    settings = settings_or_exit(FakeWooSettings, options)
    serve(settings)
