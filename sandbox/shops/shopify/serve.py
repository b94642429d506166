"""Running the fake Shopify shop with uvicorn: ``python -m sandbox.shops.shopify.serve``
(the ``shopsync fake-shop shopify`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.serving import Served
from sandbox.shops.serve import serve_shop, serve_shop_in_thread
from sandbox.shops.shopify.app import create_app
from sandbox.shops.shopify.settings import FakeShopifySettings


def banner(settings: FakeShopifySettings, port: int) -> str:
    return (f"shopsync fake-shop shopify at http://{settings.host}:{port}"
            f"/admin/api/{{version}}/graphql.json (access token {settings.token})")


def serve(settings: FakeShopifySettings) -> None:
    """Generate the shop once the port is held, print the one banner line, serve."""
    serve_shop(create_app, banner, settings)


def serve_in_thread(*args: str) -> tuple[Served, str]:
    """The shop ``shopsync fake-shop shopify ARGS`` serves, served in a thread of this
    process (``sandbox.shops.launch``): the server and its banner line."""
    from sandbox.shops.shopify.command import command

    return serve_shop_in_thread(command, FakeShopifySettings, create_app, banner, args)


if __name__ == "__main__":
    from sandbox.shops.shopify.command import command

    command()
