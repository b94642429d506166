"""Calls on the sandbox's custom events API, shared by the ``test_event_*`` modules: declare an
event type, fire it, list types and histories, read a 400's errors."""

from __future__ import annotations

import json
from typing import Any

import httpx

SOMEONE = {"contact": {"email": "nobody@example.com"}}


def field(name: str, type_: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "type": type_, "required": required, "description": None}


def create(api: httpx.Client, code_name: str = "OrderShipped", **body: Any) -> httpx.Response:
    return api.post("/events", json={"name": "Order shipped", "code_name": code_name, **body})


def make_event(api: httpx.Client, code_name: str = "OrderShipped", **body: Any) -> dict[str, Any]:
    answer = create(api, code_name, **body)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def trigger(api: httpx.Client, code_name: str, payload: Any) -> httpx.Response:
    return api.post(f"/events/trigger/{code_name}", json=payload)


def listing(
    api: httpx.Client, path: str, fields: list[str] | None = None, **settings: Any
) -> dict[str, Any]:
    params: list[tuple[str, str]] = [("fields", f) for f in fields or []]
    if settings:
        params.append(("settings", json.dumps(settings)))
    answer = api.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def errors_of(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 400, answer.text
    return answer.json()["errors"]
