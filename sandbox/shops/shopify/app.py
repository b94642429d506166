"""The fake Shopify shop as an ASGI application: the Admin GraphQL endpoint, bulk result
files, and the ``/__fake__`` API.

In front of the endpoint, as Shopify's edge would: injected transient failures (an HTML 502,
a 503 with ``Retry-After``, a JSON 500, or a 200 carrying an ``INTERNAL_SERVER_ERROR``
GraphQL error), then the ``X-Shopify-Access-Token`` check (401
``{"errors": "[API] Invalid API key or access token …"}``), then the API version: a
well-formed version older than the oldest supported one is served by the oldest (the
``X-Shopify-API-Version`` header says which), anything else is a 404.
"""

from __future__ import annotations

import hmac
import re
import secrets

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from sandbox.shops import hosting
from sandbox.shops.shopify import fake_api
from sandbox.shops.shopify.roots import run
from sandbox.shops.shopify.settings import FILES_PREFIX, SUPPORTED_VERSIONS, FakeShopifySettings
from sandbox.shops.shopify.store import Store
from sandbox.shops.web import json_response as respond
from sandbox.shops.web import shop_app

_VERSION = re.compile(r"^\d{4}-(01|04|07|10)$")
_BAD_TOKEN = "[API] Invalid API key or access token (unrecognized login or wrong password)"
_HTML_502 = (b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
             b"<h1>502 Bad Gateway</h1><p>There was a problem loading this website.</p>"
             b"</body></html>")


def served_version(asked: str) -> str | None:
    """The version that answers a request for ``asked`` (None: 404)."""
    if asked in SUPPORTED_VERSIONS:
        return asked
    if _VERSION.match(asked) and asked < SUPPORTED_VERSIONS[0]:
        return SUPPORTED_VERSIONS[0]
    return None


def create_app(settings: FakeShopifySettings) -> FastAPI:
    store = Store(settings)
    app = shop_app("shopsync fake Shopify shop", store, healthy=lambda: respond({"status": "ok"}))
    faults = hosting.Faults("shopify", settings.seed, settings.fault_rate,
                            ("502", "503", "500", "graphql"))

    @app.post("/admin/api/{version}/graphql.json")
    async def graphql(request: Request, version: str) -> Response:
        request_id = secrets.token_hex(8)
        headers = {"X-Request-Id": request_id}
        kind = faults.draw()
        if kind is not None:
            store.stats["faults"] += 1
            if kind == "502":
                return Response(_HTML_502, 502, media_type="text/html")
            if kind == "503":
                return respond({"errors": "Unavailable Shop"}, 503,
                               {"Retry-After": str(settings.retry_after)})
            if kind == "500":
                return respond({"errors": "Internal Server Error"}, 500, headers)
            return respond({"errors": [{
                "message": "Internal error. Looks like something went wrong on our end.\n"
                           f"Request ID: {request_id} (include this in support requests).",
                "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": request_id}}]},
                200, headers)
        token = request.headers.get("x-shopify-access-token", "")
        if not hmac.compare_digest(token.encode(), settings.token.encode()):
            return respond({"errors": _BAD_TOKEN}, 401, headers)
        answered = served_version(version)
        if answered is None:
            return respond({"errors": "Not Found"}, 404, headers)
        headers["X-Shopify-API-Version"] = answered
        raw = await request.body()
        if "application/graphql" in request.headers.get("content-type", ""):
            body: object = {"query": raw.decode("utf-8", "replace")}
        else:
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return respond({"errors": "Invalid JSON in request body"}, 400, headers)
        if not isinstance(body, dict):
            return respond({"errors": "Invalid request body"}, 400, headers)
        base = str(request.base_url).rstrip("/")
        return respond(run(store, body, base), 200, headers)

    @app.get(FILES_PREFIX + "/bulk/{name}")
    async def bulk_file(request: Request, name: str) -> Response:
        """A bulk result, as a signed storage URL would serve it (no Shopify token needed)."""
        store.stats["downloads"] += 1
        if request.headers.get("x-shopify-access-token"):
            store.stats["downloads_with_token"] += 1
        match = re.match(r"^(\d+)(-partial)?\.jsonl$", name)
        operation = store.bulk.get(int(match.group(1))) if match else None
        if operation is None:
            return Response(b"<Error><Code>NoSuchKey</Code></Error>", 404,
                            media_type="application/xml")
        return Response(operation.file(partial=bool(match and match.group(2))),
                        media_type="application/jsonl")

    app.include_router(fake_api.router)
    return app
