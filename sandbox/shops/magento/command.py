"""``shopsync fake-shop magento``."""

from __future__ import annotations

import click

from sandbox.shops.cli import hosting_options, listen_options, size_options


@click.command("magento")
@listen_options(default_port=8788)
@size_options(customers="Customers to generate.", orders="Orders to generate.",
              products="Products to generate (configurable ones get child products on top).")
@click.option("--carts", default=None, type=click.IntRange(min=0),
              help="Active carts (quotes) to generate  [default: a quarter of the orders].")
@click.option("--store-code", default="default", show_default=True,
              help="The store view code served at /rest/<code>/V1.")
@click.option("--timezone", default="Europe/Berlin", show_default=True,
              help="The store's timezone (the admin shows it; the REST API answers UTC).")
@click.option("--past-end", type=click.Choice(["last", "empty"]), default="last",
              show_default=True, help="A page past the end: the last page again (Magento"
              " 2.0-2.3) or no items (2.4).")
@click.option("--max-page-size", default=None, type=click.IntRange(min=1), metavar="N",
              help="Turn the Web API input limits on: refuse pageSize > N, 20 when absent.")
@click.option("--no-integration-bearer", "integration_bearer", flag_value=False, default=True,
              help="Refuse the integration token as a bearer token (Magento 2.4.4+ default).")
@hosting_options("429, or an HTML 502/503/504/403 page",
                 rate_limit="the CDN/WAF in front of the shop; default: no limit")
def command(**options: object) -> None:
    """Serve a fake Magento 2 shop: REST API at /rest/<store>/V1 (bearer token
    shopsync-fake-magento-token) plus /__fake__ to change records between reads."""
    from sandbox.shops.magento.launch import LAUNCHER

    LAUNCHER.run(options)
