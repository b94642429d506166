"""Running the fake Magento shop with uvicorn: ``python -m sandbox.shops.magento.serve`` (the
``shopsync fake-shop magento`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.shops.magento.app import create_app
from sandbox.shops.magento.settings import REST_PREFIX, FakeMagentoSettings
from sandbox.shops.serve import serve_shop


def banner(settings: FakeMagentoSettings, port: int) -> str:
    return (f"shopsync fake-shop magento at http://{settings.host}:{port}{REST_PREFIX}/"
            f"{settings.store_code} (bearer token {settings.token})")


def serve(settings: FakeMagentoSettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_shop(create_app, banner, settings)


if __name__ == "__main__":
    from sandbox.shops.magento.command import command

    command()
