"""Running the fake PrestaShop shop with uvicorn: ``python -m sandbox.shops.prestashop.serve``
(the ``shopsync fake-shop prestashop`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.serving import Served
from sandbox.shops.prestashop.app import create_app
from sandbox.shops.prestashop.settings import API_PREFIX, FakePrestaSettings
from sandbox.shops.serve import serve_shop, serve_shop_in_thread


def banner(settings: FakePrestaSettings, port: int) -> str:
    return (f"shopsync fake-shop prestashop at http://{settings.host}:{port}{API_PREFIX}"
            f" (PrestaShop {settings.ps_version}, key {settings.key}, timezone"
            f" {settings.timezone}, {settings.languages} language(s))")


def serve(settings: FakePrestaSettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_shop(create_app, banner, settings)


def serve_in_thread(*args: str) -> tuple[Served, str]:
    """The shop ``shopsync fake-shop prestashop ARGS`` serves, served in a thread of this
    process (``sandbox.shops.launch``): the server and its banner line."""
    from sandbox.shops.prestashop.command import command

    return serve_shop_in_thread(command, FakePrestaSettings, create_app, banner, args)


if __name__ == "__main__":
    from sandbox.shops.prestashop.command import command

    command()
