"""HTTP plumbing shared by the sandbox's route modules: JSON in and out, keys, query strings."""

from __future__ import annotations

from typing import Any

import orjson
import qs_codec
from fastapi import Request
from fastapi.responses import JSONResponse

from sandbox.marketing.errors import ApiError
from sandbox.marketing.settings import GENERAL_KEY_PATTERN, KPI_KEY_PATTERN
from sandbox.marketing.store import Shop, Store

API_KEY_HEADER = "spm-api-key"
#: how the real service's Express stack parses query strings (Node's qs), with room for
#: long IN lists
QS_OPTIONS = qs_codec.DecodeOptions(list_limit=1000, parameter_limit=10000, depth=5)


class OrjsonResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)


def ok(data: Any) -> dict[str, Any]:
    """The single-resource envelope."""
    return {"statusCode": 200, "data": data}


def store_of(request: Request) -> Store:
    return request.app.state.store


def _shop(request: Request, *, kpi: bool) -> Shop:
    key = request.headers.get(API_KEY_HEADER)
    if not key:
        raise ApiError(401, f"Missing {API_KEY_HEADER} header: every request must carry an API key")
    pattern = KPI_KEY_PATTERN if kpi else GENERAL_KEY_PATTERN
    if not pattern.match(key):
        family = "custom KPI endpoints" if kpi else "this endpoint"
        raise ApiError(401, f"Invalid API key: {family} expect a key matching {pattern.pattern}")
    store = store_of(request)
    shop = store.shop_for(key, kpi=kpi)
    if shop is None:
        raise ApiError(401, "Invalid API key: no shop has this key")
    shop.apply_due(store.clock.now())
    return shop


def shop(request: Request) -> Shop:
    """Dependency: the shop of the request's key (most endpoints)."""
    return _shop(request, kpi=False)


def kpi_shop(request: Request) -> Shop:
    """Dependency: the shop of the request's key on the custom KPI endpoints."""
    return _shop(request, kpi=True)


def query(request: Request) -> dict[str, Any]:
    """The query string decoded the way the real service decodes it (nested brackets)."""
    return qs_codec.decode(request.url.query, QS_OPTIONS) if request.url.query else {}


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise ApiError(400, "The request needs a JSON body")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"The body is not valid JSON: {exc}") from None


async def json_object(request: Request) -> dict[str, Any]:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, "The body must be a JSON object")
    return body
