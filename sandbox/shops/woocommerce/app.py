"""The fake WooCommerce shop as an ASGI application: REST API v3 routes, read-only."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import Response

from sandbox.shops.web import answer_errors, shop_app
from sandbox.shops.woocommerce import fake_api
from sandbox.shops.woocommerce.data import Row
from sandbox.shops.woocommerce.errors import WooError, failing_listing, invalid_id, no_route
from sandbox.shops.woocommerce.guard import Gate
from sandbox.shops.woocommerce.http import require_auth, respond, with_links
from sandbox.shops.woocommerce.listing import only_fields, pagination_headers, select
from sandbox.shops.woocommerce.names import ORDER_STATUSES
from sandbox.shops.woocommerce.params import parse
from sandbox.shops.woocommerce.records import WC_VERSION
from sandbox.shops.woocommerce.settings import API_PREFIX, FakeWooSettings
from sandbox.shops.woocommerce.store import Store


def _collection(request: Request, resource: str, within: list[Row] | None = None) -> Response:
    store = require_auth(request, listing=True)
    if resource in store.failing:
        raise failing_listing(store.failing[resource])
    params = parse(request.query_params, resource)
    rows, total = select(store, resource, params, within)
    body = [only_fields(with_links(request, resource, r, store.record(resource, r)),
                        params["_fields"]) for r in rows]
    return respond(body, headers=pagination_headers(request, total, params["page"],
                                                    params["per_page"]))


def _one(request: Request, resource: str, record_id: int, parent: int | None = None) -> Response:
    store = require_auth(request, listing=False)
    row: Row = store.tables[resource].row(record_id)
    if parent is not None and row.parent != parent:
        raise invalid_id(resource)
    record = with_links(request, resource, row, store.record(resource, row))
    return respond(only_fields(record, request.query_params.get("_fields")))


def _api() -> APIRouter:
    router = APIRouter(prefix=API_PREFIX)
    for resource, path in (("orders", "orders"), ("customers", "customers"),
                           ("coupons", "coupons"), ("categories", "products/categories"),
                           ("products", "products")):
        router.add_api_route(f"/{path}", partial(_list, resource), methods=["GET"])
        router.add_api_route(f"/{path}/{{record_id:int}}", partial(_get, resource),
                             methods=["GET"])

    @router.get("/products/{product_id:int}/variations")
    async def variations(request: Request, product_id: int) -> Response:
        store = require_auth(request, listing=True)
        store.tables["products"].row(product_id)
        rows = store.tables["variations"].rows
        return _collection(request, "variations",
                           [rows[v] for v in store.children.get(product_id, ()) if v in rows])

    @router.get("/products/{product_id:int}/variations/{variation_id:int}")
    async def variation(request: Request, product_id: int, variation_id: int) -> Response:
        return _one(request, "variations", variation_id, parent=product_id)

    @router.get("/reports/orders/totals")
    async def order_totals(request: Request) -> Response:
        """The order statuses with their counts: what the connector reads as statuses."""
        store = require_auth(request, listing=True)
        counts = store.order_status_totals()
        return respond([{"slug": slug, "name": name, "total": counts.get(slug, 0)}
                        for slug, name in ORDER_STATUSES])

    @router.get("/system_status")
    async def system_status(request: Request) -> Response:
        store = require_auth(request, listing=False)
        root = str(request.base_url).rstrip("/")
        return respond({
            "environment": {"home_url": root, "site_url": root, "version": WC_VERSION,
                            "wp_version": "6.8.1", "default_timezone": "UTC",
                            "store_id": "shopsync-fake"},
            "settings": {"currency": store.currency, "currency_symbol": "€",
                         "currency_position": "right_space", "thousand_separator": " ",
                         "decimal_separator": ",", "number_of_decimals": 2,
                         "timezone": store.settings.timezone},
            "active_plugins": [], "theme": {"name": "Storefront"},
        })

    return router


async def _list(resource: str, request: Request) -> Response:
    return _collection(request, resource)


async def _get(resource: str, request: Request, record_id: int) -> Response:
    return _one(request, resource, record_id)


def create_app(settings: FakeWooSettings) -> FastAPI:
    app = shop_app("shopsync fake WooCommerce shop", Store(settings), gate=Gate,
                   settings=settings, healthy=lambda: respond({"status": "ok"}))
    answer_errors(app, WooError, lambda exc: respond(exc.body(), exc.status, list(exc.headers.items())),
                  no_route, lambda status, detail: WooError(status, "rest_error", detail))
    app.include_router(_api())
    app.include_router(fake_api.router)
    return app
