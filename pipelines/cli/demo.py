"""``shopsync demo`` and ``shopsync dev``: the whole thing on embedded defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click


def _platforms() -> list[str]:
    from pipelines.engine.platforms import names, platform

    return [n for n in names() if platform(n).demo is not None]


platform_option = click.option(
    "--platform", "platform_name", default="woocommerce", show_default=True,
    type=click.Choice(_platforms()), help="Which fake shop platform to sync from.",
)


@click.command()
@platform_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--orders", default=200, show_default=True, help="Orders in the fake shop.")
@click.option("--customers", default=50, show_default=True, help="Customers in the fake shop.")
@click.option("--products", default=30, show_default=True, help="Products in the fake shop.")
def demo(platform_name: str, as_json: bool, orders: int, customers: int, products: int) -> None:
    """Sync a fake shop into the sandbox through Dagster, and report."""
    from pipelines.demo import format_table, run_demo

    if not as_json:
        click.echo(f"starting the sandbox and a fake {platform_name} shop; syncing through"
                   " Dagster…", err=True)
    summary = run_demo(orders=orders, customers=customers, products=products,
                       platform_name=platform_name)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(format_table(summary))
        click.echo(f"\n{'synced' if summary['success'] else 'FAILED'} in {summary['seconds']}s;"
                   " 'visible': confirmed by reading the items back from the API (reconciliation).")
    if not summary["success"]:
        sys.exit(1)


@click.command()
@platform_option
@click.option("--orders", default=200, show_default=True, help="Orders in the fake shop.")
def dev(platform_name: str, orders: int) -> None:
    """Start the sandbox (:8787) and a fake shop (:8788), then the Dagster UI on the demo."""
    from pipelines.demo import SANDBOX_PORT, SHOP_PORT, demo_env, demo_servers

    with demo_servers(orders=orders, sandbox_port=SANDBOX_PORT, shop_port=SHOP_PORT,
                      platform_name=platform_name) as (sb, shop):
        click.echo(f"sandbox {sb.url}, fake shop {shop.url}; starting Dagster (Ctrl-C stops all)")
        env = {**os.environ, **demo_env(platform_name), "SHOPSYNC_DEMO_PLATFORM": platform_name}
        env.pop("SHOPSYNC_CONFIG", None)
        try:
            subprocess.run([sys.executable, "-m", "dagster", "dev", "-m", "pipelines.definitions"],
                           env=env, check=False)
        except KeyboardInterrupt:
            pass
