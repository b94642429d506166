"""Running the fake WooCommerce shop with uvicorn: ``python -m sandbox.shops.woocommerce.serve``
(the ``shopsync fake-shop woocommerce`` command calls the same ``serve``)."""

from __future__ import annotations

import socket
import sys
from typing import Any

import click
import uvicorn

from sandbox.shops.woocommerce.app import create_app
from sandbox.shops.woocommerce.settings import API_PREFIX, FakeWooSettings


def banner(settings: FakeWooSettings, port: int) -> str:
    return (f"shopsync fake-shop woocommerce at http://{settings.host}:{port}{API_PREFIX}"
            f" (consumer key {settings.consumer_key}, secret {settings.consumer_secret})")


def serve(settings: FakeWooSettings) -> None:
    """Bind first (so ``--port 0`` picks a free port we can print), generate the shop, print
    the one banner line, then serve until stopped."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host, settings.port))
    port = sock.getsockname()[1]
    app = create_app(settings)
    config = uvicorn.Config(app, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=5)
    click.echo(banner(settings, port))
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8788, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--customers", default=50, show_default=True, type=click.IntRange(min=0))
@click.option("--orders", default=200, show_default=True, type=click.IntRange(min=0))
@click.option("--products", default=30, show_default=True, type=click.IntRange(min=0))
@click.option("--timezone", default="Europe/Paris", show_default=True)
@click.option("--rate-limit", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--fault-rate", default=0.0, show_default=True, type=click.FloatRange(0, 1))
@click.option("--retry-after", default=1, show_default=True, type=click.IntRange(min=0))
def main(**options: Any) -> None:
    """Serve a fake WooCommerce shop (REST API v3) with generated, deterministic data."""
    serve(FakeWooSettings(**options))


if __name__ == "__main__":
    main()
