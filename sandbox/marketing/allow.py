"""Which methods a path takes: what a 405 answers, in its ``Allow`` header.

Starlette names the methods of the first route whose path matches, but a path here is often
several routes (one per method), and one path may match templates whose parameters it does
not fit (``/v1/events/histories`` is not ``/v1/events/{id_event}``: ``histories`` is no
integer). So every route is asked, and a route counts only when the path's values are
valid for its parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match
from starlette.types import Scope


def _flat(routes: Iterable[BaseRoute]) -> Iterator[BaseRoute]:
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI's included routers
        yield from _flat(included.routes) if included is not None else [route]


def _fits(route: BaseRoute, path_params: dict[str, Any]) -> bool:
    """Whether the path's values are valid for ``route``'s typed path parameters."""
    if not isinstance(route, APIRoute):
        return True
    for param in route.dependant.path_params:
        _, errors = param.validate(path_params.get(param.alias), {}, loc=("path", param.alias))
        if errors:
            return False
    return True


def allowed_methods(scope: Scope, *, besides: str | None = None) -> list[str]:
    """The methods of the routes that take the request's path (but those of the template
    ``besides``), sorted."""
    methods: set[str] = set()
    for route in _flat(scope["router"].routes):
        if getattr(route, "path", None) == besides:
            continue
        match, child = route.matches(scope)
        if match is not Match.NONE and _fits(route, child.get("path_params", {})):
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods)
