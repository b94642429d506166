"""The fake's own API under ``/__fake__`` (not PrestaShop; the shared routes are
``sandbox.shops.control``'s). Needs the shop's full key (HTTP Basic), never faulted. What is
PrestaShop's own:

    GET    /__fake__/clock                     {"now": "...Z", "frozen": bool, "timezone": ...}
    POST   /__fake__/clock                     {"now": "2025-07-01T12:00:00Z" | null, "advance": 5}
    POST   /__fake__/webservice                {"enabled": false}: PS_WEBSERVICE off (503, code 22)
    GET    /__fake__/{resource}/ids            every id (?abandoned=1 on carts: carts without
                                               an order; ?customers_only=1 on addresses)
    POST   /__fake__/{resource}/{id}/touch     date_upd = now
    POST   /__fake__/{resource}/touch          {"ids": [...], "at": "...Z"?}: one second for all
    PUT    /__fake__/{resource}/{id}           patch fields (date_upd = now); multilingual ones
                                               as {"1": "...", "2": "..."} by language id
    POST   /__fake__/{resource}                create (orders: {"id_cart": N} orders a cart,
                                               without it a new cart is made too)
    DELETE /__fake__/{resource}/{id}?soft=1    delete, or set deleted=1 where the field exists

Times are UTC: ISO 8601 with ``Z`` or an offset, or naive (taken as UTC). The webservice
shows them in the shop's time zone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops.control import Control, FakeError
from sandbox.shops.hosting import FAKE_PREFIX
from sandbox.shops.prestashop.fields import RESOURCES
from sandbox.shops.prestashop.store import Store

__all__ = ["FakeError", "respond", "router"]


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PrestaControl(Control):
    resources = RESOURCES

    def parse_time(self, store: Store, value: Any) -> int:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            raise FakeError(400, f"not an ISO 8601 time: {value!r}") from None
        return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())

    def time_text(self, store: Store, epoch: int) -> Any:
        return _utc(epoch)

    def stamp(self, store: Store, at: int) -> dict[str, Any]:
        return {"date_upd": store.local_text(at), "date_upd_utc": _utc(at)}

    def read_clock(self, store: Store) -> dict[str, Any]:
        return {**self.clock(store), "timezone": store.settings.timezone}

    def ids(self, request: Request, store: Store, resource: str) -> dict[str, Any]:
        rows = list(store.tables[resource].rows.values())
        if resource == "carts" and request.query_params.get("abandoned"):
            ordered = store.cart_ids_with_orders()
            rows = [r for r in rows if r.id not in ordered]
        if resource == "addresses" and request.query_params.get("customers_only"):
            rows = [r for r in rows if r.customer]
        return {"ids": [r.id for r in rows]}

    def exists(self, store: Store, resource: str, record_id: int) -> None:
        if record_id not in store.tables[resource].rows:
            raise FakeError(404, f"no {resource} {record_id}")

    def touch(self, store: Store, resource: str, record_id: int, at: int | None = None) -> int:
        self.exists(store, resource, record_id)
        try:
            store.touch(resource, record_id, at)
        except ValueError as exc:  # a resource without dates
            raise FakeError(400, str(exc)) from None
        return record_id

    def create(self, store: Store, resource: str, fields: dict[str, Any]) -> int:
        if resource == "orders" and fields.get("id_cart"):
            cart = int(fields["id_cart"])
            self.exists(store, "carts", cart)
            if cart in store.cart_ids_with_orders():
                raise FakeError(409, f"cart {cart} already has an order")
        return store.create(resource, fields).id

    def view(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        """A change answers with the record's id and change time, not the record."""
        row = store.tables[resource].rows[record_id]
        return {"id": record_id, "date_upd": store.local_text(row.modified),
                "date_upd_utc": _utc(row.modified) if row.modified else None}

    def delete(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        self.exists(store, resource, record_id)
        soft = request.query_params.get("soft") in ("1", "true")
        try:
            store.delete(resource, record_id, soft=soft)
        except ValueError as exc:
            raise FakeError(400, str(exc)) from None
        return {"id": record_id, "deleted": "soft" if soft else "gone"}


CONTROL = PrestaControl()
respond = CONTROL.respond
router = APIRouter(prefix=FAKE_PREFIX)


@router.post("/webservice")
async def switch(request: Request) -> Response:
    store = CONTROL.store(request)
    store.webservice_enabled = bool((await CONTROL.body(request)).get("enabled", True))
    return respond({"enabled": store.webservice_enabled})


CONTROL.install(router)
