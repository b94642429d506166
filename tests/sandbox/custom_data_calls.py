"""Calls on the sandbox's custom data API, shared by the ``test_custom_data_*`` modules: a
reviews definition, defining it, saving and reading its records."""

from __future__ import annotations

from typing import Any

import httpx

REVIEWS: dict[str, Any] = {
    "name": "product_reviews",
    "description": "Reviews left on products",
    "unique_keys": ["review_ref"],
    "fields": [
        {"name": "review_ref", "label": "Reference", "type": "text", "required": True},
        {"name": "rating", "type": "number", "required": True},
        {"name": "comment", "type": "longtext"},
        {"name": "channel", "type": "list", "options": ["web", "store"], "default": "web"},
    ],
}


def define(api: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = api.post("/custom-data-definitions", json=body or REVIEWS)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def records(api: httpx.Client, id_definition: int, **params: Any) -> list[dict[str, Any]]:
    response = api.get(f"/custom-data-records/{id_definition}", params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def save(api: httpx.Client, id_definition: int, items: list[Any]) -> dict[str, Any]:
    response = api.post(f"/custom-data-records/{id_definition}", json=items)
    assert response.status_code == 200, response.text
    return response.json()


def review(ref: str, rating: int = 4, **more: Any) -> dict[str, Any]:
    return {"review_ref": ref, "rating": rating, **more}
