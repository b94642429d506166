"""Reads of the sync resources: orders, statuses, customers and any sync listing; the shop
connection."""

from __future__ import annotations

from typing import Any

from connectors.marketing.models import ListPage, Record
from connectors.marketing.operations.base import Operations, body_of, seg
from connectors.marketing.query import Query
from connectors.marketing.resources import SYNC_RESOURCES, SyncResource


def sync_resource(name: str) -> SyncResource:
    try:
        return SYNC_RESOURCES[name]
    except KeyError:
        raise ValueError(
            f"unknown sync resource {name!r}; known: {', '.join(SYNC_RESOURCES)}"
        ) from None


class CommerceOperations(Operations):
    async def list_orders(self, query: Query | None = None) -> ListPage[Record]:
        """``GET orders`` (listOrders): orders with flattened customer_*, carrier_*, status_*."""
        return await self._list("orders", query)

    async def list_orders_statuses(self, query: Query | None = None) -> ListPage[Record]:
        """``GET orders-statuses`` (listOrdersStatuses): one row per (status_id, lang)."""
        return await self._list("orders-statuses", query)

    async def get_order(self, order_id: str) -> dict[str, Any]:
        """``GET orders/id/{order_id}``; NotFoundError when the shop has no such order."""
        return await self._data("GET", f"orders/id/{seg(order_id)}")

    async def get_order_by_reference(self, reference: str) -> dict[str, Any]:
        """``GET orders/reference/{reference}``."""
        return await self._data("GET", f"orders/reference/{seg(reference)}")

    async def get_customer(self, customer_id: str) -> dict[str, Any]:
        """``GET customers/{customer_id}``."""
        return await self._data("GET", f"customers/{seg(customer_id)}")

    async def get_customer_groups(self, customer_id: str) -> list[dict[str, Any]]:
        """``GET customers/{customer_id}/groups``: the groups the customer belongs to."""
        return await self._data("GET", f"customers/{seg(customer_id)}/groups")

    async def list_customer_addresses(
        self, customer_id: str, query: Query | None = None
    ) -> ListPage[Record]:
        """``GET customers/{customer_id}/addresses``."""
        return await self.list_resource("addresses", query, parent_id=customer_id)

    async def list_resource(
        self, resource_name: str, query: Query | None = None, *, parent_id: str | int | None = None
    ) -> ListPage[Record]:
        """``GET <route>`` of any sync resource by its name in ``resources.SYNC_RESOURCES``
        (``customers``, ``products``, ``carts``...); nested ones need their ``parent_id``."""
        spec = sync_resource(resource_name)
        if spec.parent_field is not None and parent_id is None:
            raise ValueError(f"listing {resource_name} needs the {spec.parent_field} (parent_id)")
        route = spec.route if parent_id is None else spec.item_route(seg(parent_id))
        return await self._list(route, query)

    async def connect_shop(
        self,
        *,
        default_currency: str,
        default_lang: str,
        langs: list[str],
        timezone: str,
        url_client: str,
        ecommerce_version: str | None = None,
        module_version: str | None = None,
    ) -> dict[str, Any]:
        """``POST shop/connection``: declare the shop's defaults (safe to repeat)."""
        body = body_of(
            default_currency=default_currency, default_lang=default_lang, langs=langs,
            timezone=timezone, url_client=url_client, ecommerce_version=ecommerce_version,
            module_version=module_version,
        )
        return await self._data("POST", "shop/connection", json=body)
