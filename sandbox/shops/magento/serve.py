"""Running the fake Magento shop with uvicorn: ``python -m sandbox.shops.magento.serve`` (the
``shopsync fake-shop magento`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.shops.magento.app import create_app
from sandbox.shops.magento.settings import REST_PREFIX, FakeMagentoSettings
from sandbox.shops.serve import Entry


def banner(settings: FakeMagentoSettings, port: int) -> str:
    return (f"shopsync fake-shop magento at http://{settings.host}:{port}{REST_PREFIX}/"
            f"{settings.store_code} (bearer token {settings.token})")


ENTRY = Entry("sandbox.shops.magento.command:command", FakeMagentoSettings, create_app, banner)
serve, serve_in_thread = ENTRY.serve, ENTRY.serve_in_thread

if __name__ == "__main__":
    ENTRY.main()
