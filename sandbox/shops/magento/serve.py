"""Running the fake Magento shop with uvicorn: ``python -m sandbox.shops.magento.serve`` (the
``shopsync fake-shop magento`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.serving import Served
from sandbox.shops.magento.app import create_app
from sandbox.shops.magento.settings import REST_PREFIX, FakeMagentoSettings
from sandbox.shops.serve import serve_shop, serve_shop_in_thread


def banner(settings: FakeMagentoSettings, port: int) -> str:
    return (f"shopsync fake-shop magento at http://{settings.host}:{port}{REST_PREFIX}/"
            f"{settings.store_code} (bearer token {settings.token})")


def serve(settings: FakeMagentoSettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_shop(create_app, banner, settings)


def serve_in_thread(*args: str) -> tuple[Served, str]:
    """The shop ``shopsync fake-shop magento ARGS`` serves, served in a thread of this
    process (``sandbox.shops.launch``): the server and its banner line."""
    from sandbox.shops.magento.command import command

    return serve_shop_in_thread(command, FakeMagentoSettings, create_app, banner, args)


if __name__ == "__main__":
    from sandbox.shops.magento.command import command

    command()
