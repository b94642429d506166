"""Running the fake Magento shop with uvicorn: ``python -m sandbox.shops.magento.serve`` (the
``shopsync fake-shop magento`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.serving import serve_app
from sandbox.shops.magento.app import create_app
from sandbox.shops.magento.settings import REST_PREFIX, FakeMagentoSettings


def banner(settings: FakeMagentoSettings, port: int) -> str:
    return (f"shopsync fake-shop magento at http://{settings.host}:{port}{REST_PREFIX}/"
            f"{settings.store_code} (bearer token {settings.token})")


def serve(settings: FakeMagentoSettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_app(lambda: create_app(settings), settings.host, settings.port,
              lambda port: banner(settings, port))


if __name__ == "__main__":
    from sandbox.shops.magento.command import command

    command()
