"""Running the fake Shopify shop with uvicorn: ``python -m sandbox.shops.shopify.serve``
(the ``shopsync fake-shop shopify`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.shops.serve import Entry
from sandbox.shops.shopify.app import create_app
from sandbox.shops.shopify.settings import FakeShopifySettings


def banner(settings: FakeShopifySettings, port: int) -> str:
    return (f"shopsync fake-shop shopify at http://{settings.host}:{port}"
            f"/admin/api/{{version}}/graphql.json (access token {settings.token})")


ENTRY = Entry("sandbox.shops.shopify.command:command", FakeShopifySettings, create_app, banner)
serve, serve_in_thread = ENTRY.serve, ENTRY.serve_in_thread

if __name__ == "__main__":
    ENTRY.main()
