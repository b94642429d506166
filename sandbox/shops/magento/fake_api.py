"""The fake's own API under ``/__fake__`` (not Magento; the routes are
``sandbox.shops.control``'s). Takes the same bearer token (the integration token always
works here), never faulted nor rate limited. What is Magento's own:

    POST   /__fake__/clock                    {"now": "2025-07-01 12:00:00" | null, "advance": 5}
    POST   /__fake__/{resource}/{id}/touch    updated_at = now
    PUT    /__fake__/{resource}/{id}          patch fields (updated_at = now unless given)
    POST   /__fake__/{resource}               create (an order brings its ordered quote)
    DELETE /__fake__/{resource}/{id}          delete for good

Resources: orders, customers, products, carts, categories. Times without a zone are UTC.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from sandbox.shops.control import Control
from sandbox.shops.hosting import FAKE_PREFIX
from sandbox.shops.magento.errors import MagentoError, no_route, not_authorized
from sandbox.shops.magento.records import utc_text
from sandbox.shops.magento.store import RESOURCES, Store, parse_time


class MagentoControl(Control):
    resources = RESOURCES
    stamp_field = "updated_at"
    media_type = "application/json; charset=utf-8"

    def error(self, status: int, message: str, code: str = "") -> Exception:
        return MagentoError(status, message)

    def authorize(self, request: Request) -> None:
        store: Store = request.app.state.store
        token = request.scope.get("state", {}).get("token")
        if not token or not store.token_valid(token, fake_api=True):
            raise not_authorized("Magento_Backend::admin")

    def unknown(self, resource: str) -> Exception:
        return no_route()

    def not_json(self) -> Exception:
        return MagentoError(400, "Decoding error: %1", ["Syntax error"])

    def not_object(self) -> Exception:
        return MagentoError(400, "The body must be a JSON object.")

    def parse_time(self, store: Store, value: Any) -> int:
        return parse_time(value)

    def time_text(self, store: Store, epoch: int) -> Any:
        return utc_text(epoch)

    def delete(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        store.remove(resource, record_id)
        return {"deleted": record_id}


router = MagentoControl().install(APIRouter(prefix=FAKE_PREFIX))
