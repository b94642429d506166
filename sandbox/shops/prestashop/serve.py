"""Running the fake PrestaShop shop with uvicorn: ``python -m sandbox.shops.prestashop.serve``
(the ``shopsync fake-shop prestashop`` command calls the same ``serve``)."""

from __future__ import annotations

from sandbox.shops.prestashop.app import create_app
from sandbox.shops.prestashop.settings import API_PREFIX, FakePrestaSettings
from sandbox.shops.serve import Entry


def banner(settings: FakePrestaSettings, port: int) -> str:
    return (f"shopsync fake-shop prestashop at http://{settings.host}:{port}{API_PREFIX}"
            f" (PrestaShop {settings.ps_version}, key {settings.key}, timezone"
            f" {settings.timezone}, {settings.languages} language(s))")


ENTRY = Entry("sandbox.shops.prestashop.command:command", FakePrestaSettings, create_app, banner)
serve, serve_in_thread = ENTRY.serve, ENTRY.serve_in_thread

if __name__ == "__main__":
    ENTRY.main()
