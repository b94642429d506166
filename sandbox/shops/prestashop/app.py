"""The fake PrestaShop shop as an ASGI application: the webservice under ``/api/`` (read
only, like a key with GET and HEAD rights) and the ``/__fake__`` API."""

from __future__ import annotations

import time
from typing import Any

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response

from sandbox.shops.prestashop import fake_api, render
from sandbox.shops.prestashop.errors import PSError, did_you_mean
from sandbox.shops.prestashop.fields import RESOURCES, fields_of, singular
from sandbox.shops.prestashop.guard import Gate
from sandbox.shops.prestashop.query import languages_of, parse, select
from sandbox.shops.prestashop.settings import API_PREFIX, LIMITED_KEY, FakePrestaSettings
from sandbox.shops.prestashop.store import Store
from sandbox.shops.web import answer_errors, shop_app

#: every resource PrestaShop's webservice knows (WebserviceRequest::getResources); the
#: fake serves those in fields.RESOURCES, and its key may read only those
KNOWN = sorted({*RESOURCES, "carriers", "cart_rules", "contacts", "content_management_system",
                "customer_messages", "customer_threads", "deliveries", "employees", "guests",
                "image_types", "images", "messages", "order_carriers", "order_details",
                "order_histories", "order_invoices", "order_payments", "order_slip",
                "price_ranges", "product_features", "product_feature_values",
                "product_suppliers", "search", "shop_groups", "shop_urls", "shops",
                "specific_prices", "states", "stock_availables", "stock_movements", "stores",
                "suppliers", "tags", "taxes", "tax_rule_groups", "tax_rules",
                "translated_configurations", "warehouses", "weight_ranges", "zones"})
#: what the limited key may not read
LIMITED_OUT = frozenset({"customers", "configurations"})


def _allowed(key: str) -> list[str]:
    return [r for r in RESOURCES if key != LIMITED_KEY or r not in LIMITED_OUT]


def _content(store: Store, json: bool, base: str, resource: str, items: list[dict[str, Any]],
             *, minimal: bool, details: bool, displayed: bool) -> bytes:
    if not json:
        return render.xml_document(resource, items, base, minimal=minimal, details=details).encode()
    if details and not displayed:
        return orjson.dumps({singular(resource): items[0]})
    if not items and store.settings.bare_empty_list:
        return b"[]"
    return orjson.dumps({resource: items})


async def webservice(request: Request) -> Response:
    started = time.perf_counter()
    store: Store = request.app.state.store
    settings = store.settings
    params = dict(request.query_params)
    json = render.wants_json(request.headers, params)
    base = f"{str(request.base_url).rstrip('/')}{API_PREFIX}"
    segments = [s for s in request.url.path.removeprefix(API_PREFIX).split("/") if s]
    resource = segments[0] if segments else ""
    key = request.scope["state"]["key"]

    def answer(content: bytes | None, status: int = 200,
               headers: dict[str, str] | None = None) -> Response:
        return render.answer(content, status, json=json, ps_version=settings.ps_version,
                             started=started, headers=headers)

    try:
        shop = params.get("id_shop")
        if shop is not None and shop not in ("1", "all"):
            if shop.isdigit():
                raise PSError(403, 132, "No permission for this key on this shop")
            raise PSError(404, 999, "This shop id does not exist")
        languages = languages_of(store, params.get("language"))
        if not resource:
            if json and settings.version == "8":
                raise PSError(500, 0, "Call to a member function getWebserviceParameters() on"
                                      " array (PrestaShop issue 32179)")
            content = (orjson.dumps(_allowed(key)) if json
                       else render.xml_resources(_allowed(key), base).encode())
            return answer(content)
        if resource not in KNOWN:
            raise did_you_mean(400, 27, f'Resource of type "{resource}" does not exists',
                               resource, KNOWN)
        if resource not in _allowed(key):
            raise PSError(401, 26, f'Resource of type "{resource}" is not allowed with this'
                                   " authentication key")
        if request.method not in ("GET", "HEAD"):
            raise PSError(405, 25, f"Method {request.method} is not allowed for the resource"
                                   f" {resource} with this authentication key")
        query = parse(resource, params, settings.version)
        fields = fields_of(resource, settings.version)
        if len(segments) > 1:
            digits = segments[1] if segments[1].isdigit() else "0"
            row = store.tables[resource].rows.get(int(digits))
            if row is None:  # getFilteredObjectDetails: a bare 404, no content
                return answer(None, 404)
            shown = fields if query.display in ("full", "minimum") else query.display
            item = render.record(resource, store.record(resource, row), shown, languages,
                                 settings.version, associations=shown is fields)
            content = _content(store, json, base, resource, [item], minimal=False, details=True,
                               displayed="display" in params)
            return answer(content)
        rows, cells = select(store, resource, query, languages)
        minimal = query.display == "minimum"
        if minimal:
            items = [{"id": r.id} for r in rows]
        else:
            shown = fields if query.display == "full" else query.display
            items = [render.record(resource, cells.record(r), shown, languages, settings.version,
                                   associations=query.display == "full") for r in rows]
        content = _content(store, json, base, resource, items, minimal=minimal, details=False,
                           displayed=True)
        return answer(content)
    except PSError as exc:
        return answer(render.error_content([exc], json), exc.status, exc.headers)


def create_app(settings: FakePrestaSettings) -> FastAPI:
    app = shop_app("shopsync fake PrestaShop shop", Store(settings), gate=Gate, settings=settings,
                   healthy=lambda: Response(b'{"status":"ok"}', media_type="application/json"))
    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
    app.add_api_route(API_PREFIX, webservice, methods=methods, include_in_schema=False)
    app.add_api_route(API_PREFIX + "/{path:path}", webservice, methods=methods,
                      include_in_schema=False)
    answer_errors(app, fake_api.FakeError,
                  lambda exc: fake_api.respond({"error": exc.message}, exc.status))
    app.include_router(fake_api.router)
    return app
