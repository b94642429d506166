"""The sandbox's OpenAPI description: FastAPI's, plus the item schemas of the bulk writes
and the ``spm-api-key`` security scheme."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from connectors.marketing.resources import SYNC_RESOURCES


def describe(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        for resource in SYNC_RESOURCES.values():
            item = resource.model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(item.pop("$defs", {}))
            schemas[resource.model.__name__] = item
        components["securitySchemes"] = {
            "apiKey": {"type": "apiKey", "in": "header", "name": "spm-api-key"}
        }
        schema["security"] = [{"apiKey": []}]
        app.openapi_schema = schema
    return app.openapi_schema
