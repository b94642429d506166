"""The fake's own API under ``/__fake__`` (not WooCommerce; the shared routes are
``sandbox.shops.control``'s). Authenticated like the REST API, never faulted. What is
WooCommerce's own:

    GET    /__fake__/{resource}/ids           every id (trash included; ?exclude_status=a,b
                                              leaves those out) and counts by status
    POST   /__fake__/{resource}/{id}/touch    date_modified = now
    PUT    /__fake__/{resource}/{id}          patch fields (date_modified bumped unless given)
    POST   /__fake__/{resource}               create (fields default to a generated record)
    DELETE /__fake__/{resource}/{id}?force=   as the REST API's DELETE: force=true deletes for
                                              good; without it orders, products, variations
                                              and coupons go to the trash, customers and
                                              categories are refused (501)
    POST   /__fake__/{resource}/fail          {"status": 401}: its listing answers that status
                                              (WordPress's error for it) until cleared, as a
                                              key that lost read access would see
    DELETE /__fake__/{resource}/fail          its listing answers again

Resources: orders, products, variations, customers, coupons, categories. Times without a
zone are GMT. A variation's change bumps its product too.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from sandbox.shops.control import Control
from sandbox.shops.hosting import FAKE_PREFIX
from sandbox.shops.woocommerce.errors import WooError, no_route
from sandbox.shops.woocommerce.http import require_auth, respond, with_links
from sandbox.shops.woocommerce.store import RESOURCES, Store, parse_datetime


class WooControl(Control):
    resources = RESOURCES
    stamp_field = "date_modified_gmt"
    media_type = "application/json; charset=UTF-8"

    def error(self, status: int, message: str, code: str = "") -> Exception:
        return WooError(status, code, message)

    def authorize(self, request: Request) -> None:
        require_auth(request, listing=False)

    def unknown(self, resource: str) -> Exception:
        return no_route()

    def not_json(self) -> Exception:
        return WooError(400, "rest_invalid_json", "Invalid JSON body passed.")

    def not_object(self) -> Exception:
        return WooError(400, "rest_invalid_json", "The body must be a JSON object.")

    def parse_time(self, store: Store, value: Any) -> int:
        try:
            return parse_datetime(str(value))[0]
        except ValueError:
            raise WooError(400, "fake_invalid_date", f"Not an ISO-8601 date: {value!r}") from None

    def time_text(self, store: Store, epoch: int) -> Any:
        return store.gmt_text(epoch)

    def ids(self, request: Request, store: Store, resource: str) -> dict[str, Any]:
        excluded = set(filter(None, request.query_params.get("exclude_status", "").split(",")))
        rows = [r for r in store.tables[resource].rows.values() if r.status not in excluded]
        return {"ids": [r.id for r in rows],
                "statuses": dict(Counter(r.status or r.kind for r in rows))}

    def view(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        row = store.tables[resource].row(record_id)
        return with_links(request, resource, row, store.record(resource, row))

    def delete(self, request: Request, store: Store, resource: str, record_id: int) -> Any:
        force = request.query_params.get("force", "").lower() in ("1", "true")
        row, record = store.delete(resource, record_id, force=force)
        return with_links(request, resource, row, record)


CONTROL = WooControl()
router = APIRouter(prefix=FAKE_PREFIX)


@router.post("/{resource}/fail")
async def fail(request: Request, resource: str) -> Response:
    """Make the resource's listing answer ``status`` from now on: a step that reads it fails,
    the others run (what a failed run must show)."""
    store = CONTROL.store(request, resource)
    status = (await CONTROL.body(request)).get("status")
    if not isinstance(status, int) or not 400 <= status <= 599:
        raise WooError(400, "fake_invalid_status", f"status must be 400 to 599, not {status!r}")
    store.failing[resource] = status
    return respond({"resource": resource, "failing": status})


@router.delete("/{resource}/fail")
async def clear_failure(request: Request, resource: str) -> Response:
    store = CONTROL.store(request, resource)
    store.failing.pop(resource, None)
    return respond({"resource": resource, "failing": None})


CONTROL.install(router)
