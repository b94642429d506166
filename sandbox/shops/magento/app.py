"""The fake Magento shop as an ASGI application: the REST routes a sync reads, read-only, at
``/rest/<store_code>/V1/…`` (and ``/rest/V1/…`` for the default store)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import orjson
import qs_codec
from fastapi import APIRouter, FastAPI, Request
from starlette.responses import Response

from sandbox.shops.magento import fake_api
from sandbox.shops.magento.errors import ACL, MagentoError, no_route, not_authorized
from sandbox.shops.magento.guard import Gate
from sandbox.shops.magento.search import light_item, parse, parse_fields, select, trim
from sandbox.shops.magento.settings import REST_PREFIX, FakeMagentoSettings
from sandbox.shops.magento.store import Store
from sandbox.shops.web import answer_errors, shop_app
from sandbox.shops.web import json_response as respond

QS = qs_codec.DecodeOptions(list_limit=1000, parameter_limit=10000, depth=8)
Handler = Callable[..., Awaitable[Response]]


def store_of(request: Request) -> Store:
    return request.app.state.store


def authorize(request: Request, acl: str) -> Store:
    """The route's ACL check: a missing, wrong, expired or (2.4.4+) refused integration
    token gets the 401 naming the route's ACL resource."""
    store = store_of(request)
    token = request.scope.get("state", {}).get("token")
    if not token or not store.token_valid(token):
        raise not_authorized(acl)
    code = request.path_params.get("store_code", "default")
    if code not in (store.settings.store_code, "default", "all"):
        raise MagentoError(400, "The store that was requested wasn't found. Verify the store"
                                " and try again.")
    return store


def _query(request: Request) -> dict[str, Any]:
    return qs_codec.decode(request.url.query, QS) if request.url.query else {}


def _fields(query: dict[str, Any]) -> dict[str, Any] | None:
    given = query.get("fields")
    return parse_fields(given) if isinstance(given, str) and given.strip() else None


async def search(resource: str, request: Request) -> Response:
    store = authorize(request, ACL[resource])
    query = _query(request)
    crit = parse(query, required_criteria=True)
    rows, total, _ = select(store.tables[resource], resource, crit,
                            past_end=store.settings.past_end,
                            max_page_size=store.settings.max_page_size)
    spec = _fields(query)
    item_spec = spec.get("items") if spec else None
    items = [light_item(resource, item_spec, r) or trim(store.record(resource, r), item_spec)
             for r in rows]
    body: dict[str, Any] = {"items": items, "search_criteria": crit.echo(),
                            "total_count": total}
    if spec is not None:
        body = {key: body[key] if key == "items" else trim(body[key], sub)
                for key, sub in spec.items() if key in body}
    return respond(body)


async def one(resource: str, request: Request, record_id: int) -> Response:
    store = authorize(request, ACL[resource])
    record = store.record(resource, store.tables[resource].row(record_id))
    return respond(trim(record, _fields(_query(request))))


def _rest() -> APIRouter:
    router = APIRouter()
    routes: list[tuple[str, Handler, str]] = [
        ("/orders", partial(search, "orders"), "GET"),
        ("/orders/{record_id:int}", partial(one, "orders"), "GET"),
        ("/customers/search", partial(search, "customers"), "GET"),
        ("/customers/{record_id:int}", partial(one, "customers"), "GET"),
        ("/products", partial(search, "products"), "GET"),
        ("/products/{sku}", product_by_sku, "GET"),
        ("/configurable-products/{sku}/children", children, "GET"),
        ("/carts/search", partial(search, "carts"), "GET"),
        ("/carts/{record_id:int}", partial(one, "carts"), "GET"),
        ("/categories/list", partial(search, "categories"), "GET"),
        ("/categories/{record_id:int}", partial(one, "categories"), "GET"),
        ("/store/storeConfigs", store_configs, "GET"),
        ("/integration/admin/token", admin_token, "POST"),
    ]
    for prefix in (f"{REST_PREFIX}/{{store_code}}/V1", f"{REST_PREFIX}/V1",
                   f"/index.php{REST_PREFIX}/{{store_code}}/V1", f"/index.php{REST_PREFIX}/V1"):
        for path, handler, method in routes:
            router.add_api_route(prefix + path, handler, methods=[method])
    return router


async def product_by_sku(request: Request, sku: str) -> Response:
    store = authorize(request, ACL["products"])
    record = store.record("products", store.by_sku(sku))
    return respond(trim(record, _fields(_query(request))))


async def children(request: Request, sku: str) -> Response:
    """The simple products of a configurable one (an empty list for other types)."""
    store = authorize(request, ACL["products"])
    parent = store.by_sku(sku)
    table = store.tables["products"]
    return respond([store.record("products", table.rows[c])
                    for c in store.children.get(parent.id, ())])


async def store_configs(request: Request) -> Response:
    store = authorize(request, ACL["store"])
    root = str(request.base_url)
    settings = store.settings
    return respond([{
        "id": 1, "code": settings.store_code, "website_id": 1, "locale": "de_DE",
        "base_currency_code": settings.currency, "default_display_currency_code": settings.currency,
        "timezone": settings.timezone, "weight_unit": "kgs", "base_url": root,
        "base_link_url": root, "base_static_url": f"{root}static/", "base_media_url": f"{root}media/",
        "secure_base_url": root, "secure_base_link_url": root,
        "secure_base_static_url": f"{root}static/", "secure_base_media_url": f"{root}media/",
    }])


async def admin_token(request: Request) -> Response:
    """POST {"username", "password"} -> the token as a JSON string (4 hours by default)."""
    try:
        body = orjson.loads(await request.body() or b"{}")
    except orjson.JSONDecodeError:
        raise MagentoError(400, "Decoding error: %1", ["Syntax error"]) from None
    if not isinstance(body, dict):
        body = {}
    return respond(store_of(request).issue_admin_token(body.get("username"), body.get("password")))


def create_app(settings: FakeMagentoSettings) -> FastAPI:
    app = shop_app("shopsync fake Magento shop", Store(settings), gate=Gate, settings=settings,
                   healthy=lambda: respond({"status": "ok"}))
    answer_errors(app, MagentoError, lambda exc: respond(exc.body(), exc.status, exc.headers),
                  no_route, MagentoError)
    app.include_router(_rest())
    app.include_router(fake_api.router)
    return app
