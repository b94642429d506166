"""The Marketing API client: one async method per operation of the API.

Method names are the spec's operation names in snake_case. Routes, batch sizes and item
keys come from ``resources.py``; sending, keys and retries from ``transport.py``.
``BlockingMarketingClient`` (``blocking.py``) offers the same methods without ``await``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from connectors.http.retry import RetryPolicy
from connectors.marketing.models import BulkResult, DataSource, ListPage
from connectors.marketing.resources import SYNC_RESOURCES, SyncResource
from connectors.marketing.transport import DEFAULT_TIMEOUT, ApiTransport, TransportStats


def sync_resource(name: str) -> SyncResource:
    try:
        return SYNC_RESOURCES[name]
    except KeyError:
        raise ValueError(
            f"unknown sync resource {name!r}; known: {', '.join(SYNC_RESOURCES)}"
        ) from None


class MarketingClient:
    """Async client of the Marketing Automation Data API (use ``async with``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | SecretStr | None = None,
        *,
        kpi_api_key: str | SecretStr | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_connections: int = 32,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.transport = ApiTransport(
            base_url,
            api_key,
            kpi_api_key=kpi_api_key,
            retry=retry,
            timeout=timeout,
            max_connections=max_connections,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"MarketingClient(base_url={self.transport.base_url!r})"

    async def __aenter__(self) -> MarketingClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.transport.aclose()

    @property
    def stats(self) -> TransportStats:
        return self.transport.stats

    # sync resources ----------------------------------------------------------------------

    def _write_route(self, resource: SyncResource, parent_id: str | int | None) -> str:
        if resource.parent_field is None:
            return resource.route
        if parent_id is None:
            assert resource.bulk_route is not None
            return resource.bulk_route
        return resource.item_route(parent_id)

    async def bulk_save(
        self, resource: str, items: Sequence[dict[str, Any]], *, parent_id: str | int | None = None
    ) -> BulkResult:
        """POST: insert or update each item by its id within shop and data source.

        Nested resources (addresses, variations, images) go to the cross-parent ``…/bulk``
        route unless ``parent_id`` is given.
        """
        spec = sync_resource(resource)
        self._check_size(spec, items)
        answer = await self.transport.request(
            "POST", self._write_route(spec, parent_id), json=list(items)
        )
        return BulkResult.model_validate(answer)

    async def bulk_update(
        self, resource: str, items: Sequence[dict[str, Any]], *, parent_id: str | int | None = None
    ) -> BulkResult:
        """PUT: update items that exist; unknown ids come back in ``rejected_items``."""
        spec = sync_resource(resource)
        self._check_size(spec, items)
        if spec.parent_field is not None and parent_id is None:
            raise ValueError(f"updating {resource} needs the {spec.parent_field} (parent_id)")
        answer = await self.transport.request(
            "PUT", self._write_route(spec, parent_id), json=list(items)
        )
        return BulkResult.model_validate(answer)

    async def bulk_delete(
        self, resource: str, ids: Sequence[str | int], *, parent_id: str | int | None = None
    ) -> BulkResult:
        """Delete by id (idempotent: unknown ids are not an error)."""
        spec = sync_resource(resource)
        if spec.parent_field is not None and parent_id is None:
            raise ValueError(f"deleting {resource} needs the {spec.parent_field} (parent_id)")
        route = self._write_route(spec, parent_id) + "/bulk-delete"
        answer = await self.transport.request("POST", route, json={spec.delete_key: list(ids)})
        return BulkResult.model_validate(answer)

    @staticmethod
    def _check_size(spec: SyncResource, items: Sequence[Any]) -> None:
        if len(items) > spec.max_batch:
            raise ValueError(
                f"a {spec.name} batch holds at most {spec.max_batch} items, got {len(items)};"
                " use the bulk writer to send any number"
            )

    # data sources ------------------------------------------------------------------------

    async def list_data_sources(self) -> ListPage[DataSource]:
        answer = await self.transport.request("GET", "data-sources")
        return ListPage[DataSource].model_validate(answer)
