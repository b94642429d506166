"""Running the fake WooCommerce shop with uvicorn: ``python -m sandbox.shops.woocommerce.serve``
(the ``shopsync fake-shop woocommerce`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.shops.serve import Entry
from sandbox.shops.woocommerce.app import create_app
from sandbox.shops.woocommerce.settings import API_PREFIX, FakeWooSettings


def banner(settings: FakeWooSettings, port: int) -> str:
    return (f"shopsync fake-shop woocommerce at http://{settings.host}:{port}{API_PREFIX}"
            f" (consumer key {settings.consumer_key}, secret {settings.consumer_secret})")


ENTRY = Entry("sandbox.shops.woocommerce.command:command", FakeWooSettings, create_app, banner)
serve, serve_in_thread = ENTRY.serve, ENTRY.serve_in_thread

if __name__ == "__main__":
    ENTRY.main()
