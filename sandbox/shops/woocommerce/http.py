"""Small helpers shared by the fake's route modules: JSON answers, links, authentication."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from sandbox.shops.woocommerce.data import Row
from sandbox.shops.woocommerce.errors import cannot_view
from sandbox.shops.woocommerce.settings import API_PREFIX
from sandbox.shops.woocommerce.store import Store

_PATHS = {"orders": "orders", "products": "products", "customers": "customers",
          "coupons": "coupons", "categories": "products/categories"}


def respond(data: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Response:
    response = Response(orjson.dumps(data), status_code=status,
                        media_type="application/json; charset=UTF-8")
    for name, value in headers or []:
        response.raw_headers.append((name.lower().encode(), value.encode()))
    return response


def require_auth(request: Request, *, listing: bool) -> Store:
    """The route's permission check: requests without credentials are refused here (wrong
    credentials were already refused by the gate)."""
    if not request.scope.get("state", {}).get("authenticated"):
        raise cannot_view(listing)
    store: Store = request.app.state.store
    return store


def with_links(request: Request, resource: str, row: Row, record: dict[str, Any]) -> dict[str, Any]:
    root = f"{str(request.base_url).rstrip('/')}{API_PREFIX}"
    if resource == "variations":
        collection = f"{root}/products/{row.parent}/variations"
        links = {"up": [{"href": f"{root}/products/{row.parent}"}]}
    else:
        collection, links = f"{root}/{_PATHS[resource]}", {}
        if resource == "orders" and row.customer:
            links["customer"] = [{"href": f"{root}/customers/{row.customer}"}]
    record["_links"] = {"self": [{"href": f"{collection}/{row.id}"}],
                        "collection": [{"href": collection}], **links}
    return record
