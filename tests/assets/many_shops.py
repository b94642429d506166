"""A configuration of many shops for the tests and the bench of a large code location:
sources of the HTTP platforms in turn, at addresses nothing answers on (building the
definitions must not connect anywhere)."""

from __future__ import annotations

from typing import Any

#: platform -> the connection of its shop number ``i``
CONNECTIONS = {
    "woocommerce": lambda i: {"url": f"https://shop{i}.example.com", "key_env": f"WC_KEY_{i}",
                              "secret_env": f"WC_SECRET_{i}"},
    "shopify": lambda i: {"url": f"https://shop{i}.myshopify.com",
                          "token_env": f"SHOPIFY_TOKEN_{i}"},
    "prestashop": lambda i: {"url": f"https://shop{i}.example.com", "key_env": f"PS_KEY_{i}"},
    "magento": lambda i: {"url": f"https://shop{i}.example.com/rest/default",
                          "token_env": f"MAGENTO_TOKEN_{i}"},
}


def many_shops(count: int, platforms: tuple[str, ...] = tuple(CONNECTIONS)) -> dict[str, Any]:
    """A ``shops.yaml`` document of ``count`` sources, ``shop_0000`` …, on default schedules;
    every tenth writes to an account of its own."""
    sources = []
    for i in range(count):
        platform = platforms[i % len(platforms)]
        source: dict[str, Any] = {"name": f"shop_{i:04d}", "platform": platform,
                                  "connection": CONNECTIONS[platform](i),
                                  "data_source": {"label": f"shop {i}"},
                                  "history_start": "2024-01-01"}
        if i % 10 == 0:
            source["destination"] = {"api_key_env": f"API_KEY_{i}"}
        sources.append(source)
    return {"destination": {"base_url": "https://api.example.com/v1",
                            "api_key_env": "MARKETING_API_KEY"},
            "sources": sources}
