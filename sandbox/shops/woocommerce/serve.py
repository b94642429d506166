"""Running the fake WooCommerce shop with uvicorn: ``python -m sandbox.shops.woocommerce.serve``
(the ``shopsync fake-shop woocommerce`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.serving import Served
from sandbox.shops.serve import serve_shop, serve_shop_in_thread
from sandbox.shops.woocommerce.app import create_app
from sandbox.shops.woocommerce.settings import API_PREFIX, FakeWooSettings


def banner(settings: FakeWooSettings, port: int) -> str:
    return (f"shopsync fake-shop woocommerce at http://{settings.host}:{port}{API_PREFIX}"
            f" (consumer key {settings.consumer_key}, secret {settings.consumer_secret})")


def serve(settings: FakeWooSettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_shop(create_app, banner, settings)


def serve_in_thread(*args: str) -> tuple[Served, str]:
    """The shop ``shopsync fake-shop woocommerce ARGS`` serves, served in a thread of this
    process (``sandbox.shops.launch``): the server and its banner line."""
    from sandbox.shops.woocommerce.command import command

    return serve_shop_in_thread(command, FakeWooSettings, create_app, banner, args)


if __name__ == "__main__":
    from sandbox.shops.woocommerce.command import command

    command()
