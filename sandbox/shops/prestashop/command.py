"""``shopsync fake-shop prestashop``."""

from __future__ import annotations

from sandbox.shops.cli import hosting_options, options, serving
from sandbox.shops.prestashop.settings import FakePrestaSettings

command = serving(
    "prestashop", FakePrestaSettings,
    """Serve a fake PrestaShop shop: the webservice at /api (key
    SHOPSYNCFAKEPRESTASHOPWEBSERVICE as the Basic user name) plus /__fake__ to change it.""",
    options(
        FakePrestaSettings,
        customers="Customers to generate (guests and a deleted one included).",
        orders="Orders to generate, each with its cart.",
        products="Products to generate (some with combinations).",
        abandoned_carts="Carts without an order, on top of the orders' carts [default: orders/3].",
        timezone="PS_TIMEZONE: the webservice shows every date as wall-clock time in it.",
        version="1.7: all values strings, empty lists as a bare []; 8: integer ids and counters,"
                " {\"orders\": []}, null fields left out.",
        languages="Active languages (en, fr, de); with 1, multilingual fields are plain strings."),
    hosting_options("429, 503, 502, a PHP warning 500 or a 200 spoiled by a PHP notice",
                    rate_limit="default: no limit, as in PrestaShop's core"))
