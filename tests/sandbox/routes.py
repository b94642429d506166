"""The sandbox's API routes as the app declares them, for tests that go over all of them."""

from __future__ import annotations

from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from sandbox.marketing.app import create_app
from sandbox.marketing.settings import SandboxSettings


def api_routes(routes: list[BaseRoute] | None = None) -> list[APIRoute]:
    """Every API route of a sandbox started with ``--manual-clock`` (all routes it can have),
    through the routers the app includes (FastAPI keeps an included router's routes on it)."""
    if routes is None:
        routes = create_app(SandboxSettings(manual_clock=True)).routes
    found = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif (included := getattr(route, "original_router", None)) is not None:
            found += api_routes(included.routes)
    return found
