"""One valid example item per sync resource.

They document the item shapes and give tests and benchmarks a valid starting point to vary
(the sandbox's own request examples must be valid for the client's models, and these for
the sandbox's: a contract test checks both).
"""

from __future__ import annotations

import copy
from typing import Any

_TS = "2026-01-15T10:30:00Z"
_LINE = {"product_id": 101, "product_variation_id": 5, "price": 19.9,
         "price_without_tax": 16.58, "manufacturer_id": "m1", "quantity": 2}

_SAMPLES: dict[str, dict[str, Any]] = {
    "customers": {
        "customer_id": "c-1001", "email": "ada@example.com", "first_name": "Ada",
        "last_name": "Lovelace", "is_opt_in": True, "is_newsletter_subscribed": False,
        "lang": "en", "is_active": True, "created_at": _TS, "updated_at": _TS,
        "phone_number": "+33600000000", "birth_date": "1990-12-10", "group_ids": ["g1"],
    },
    "addresses": {
        "address_id": 501, "customer_id": "c-1001", "first_name": "Ada", "last_name": "Lovelace",
        "address_line_1": "12 rue de la Paix", "postal_code": "75002", "city": "Paris",
        "country": "FR", "is_active": True,
    },
    "groups": {"group_id": "g1", "lang": "en", "name": "VIP", "created_at": _TS,
               "updated_at": _TS},
    "orders": {
        "order_id": "o-9001", "lang": "en", "status_id": "2",
        "customer": {"customer_id": "c-1001", "email": "ada@example.com", "created_at": _TS},
        "products": [_LINE], "cart_id": "cart-77", "cart_updated_at": _TS, "amount": 44.8,
        "amount_without_tax": 37.33, "shipping_costs": 5.0, "shipping_costs_without_tax": 4.17,
        "currency": "EUR", "is_confirmed": True, "created_at": _TS, "updated_at": _TS,
        "reference": "XKBKNABJK", "carrier_id": "k1",
    },
    "statuses": {"status_id": "2", "lang": "en", "name": "Payment accepted",
                 "is_deleted": False, "created_at": _TS, "updated_at": _TS},
    "carriers": {"carrier_id": "k1", "name": "Colissimo", "is_active": True,
                 "created_at": _TS, "updated_at": _TS},
    "products": {
        "product_id": 101, "lang": "en", "name": "Linen shirt", "description": "A shirt.",
        "link": "https://shop.example.com/p/101", "currency": "EUR", "price": 19.9,
        "quantity_remaining": 12, "is_active": True, "created_at": _TS, "updated_at": _TS,
        "category_ids": [3], "manufacturer_id": "m1",
    },
    "variations": {
        "variation_id": 5, "product_id": 101, "name": "Linen shirt - M", "lang": "en",
        "link": "https://shop.example.com/p/101?v=5", "price": 19.9, "quantity_remaining": 4,
        "is_default": True,
    },
    "images": {"image_id": 9, "product_id": 101, "lang": "en",
               "url": "https://shop.example.com/i/9.jpg", "is_default": True},
    "categories": {"category_id": 3, "lang": "en", "name": "Shirts", "description": "Shirts.",
                   "link": "https://shop.example.com/c/3", "is_active": True,
                   "created_at": _TS, "updated_at": _TS},
    "manufacturers": {"manufacturer_id": "m1", "name": "Atelier", "is_active": True,
                      "created_at": _TS, "updated_at": _TS},
    "vouchers": {
        "voucher_id": "v1", "lang": "en", "code": "WELCOME10", "description": "10% off",
        "started_at": _TS, "type_voucher": "percentage_reduction", "minimum_amount": 0,
        "currency": "EUR", "reduction_tax": True, "is_used": False, "is_active": True,
        "created_at": _TS, "updated_at": _TS, "value": 10,
    },
    "carts": {"cart_id": "cart-77", "customer_id": "c-1001", "email": "ada@example.com",
              "currency": "EUR", "amount": 39.8, "products": [_LINE], "created_at": _TS,
              "updated_at": _TS, "is_converted": True},
}


def sample_item(resource: str, **overrides: Any) -> dict[str, Any]:
    """A fresh copy of the example item of ``resource``, with ``overrides`` applied."""
    item = copy.deepcopy(_SAMPLES[resource])
    item.update(overrides)
    return item


def sample_resources() -> list[str]:
    return list(_SAMPLES)
