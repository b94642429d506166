"""The Marketing API client: one async method per operation of the API.

Method names are the spec's operation names in snake_case. Routes, batch sizes and item
keys come from ``resources.py``; sending, keys and retries from ``transport.py``. The
operations are grouped by area in ``operations/`` and combined here; this module keeps the
sync writes and the data sources. ``BlockingMarketingClient`` (``blocking.py``) offers the
same methods without ``await``.

Listing methods take an optional ``Query`` and return ``ListPage[dict]``; single reads
return the ``data`` of the single envelope; ``iter_pages``/``iter_records`` walk all pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import httpx
import orjson
import tenacity
from pydantic import SecretStr

from connectors.http.breaker import CircuitBreaker
from connectors.http.pacing import Pacing
from connectors.http.retry import RetryPolicy, async_retrying
from connectors.marketing.errors import ClientConfigError, TransientError
from connectors.marketing.models import BulkResult, DataSource, ListPage, Single
from connectors.marketing.operations.base import body_of, seg
from connectors.marketing.operations.commerce import CommerceOperations, sync_resource
from connectors.marketing.operations.contacts import ContactOperations
from connectors.marketing.operations.custom_data import CustomDataOperations
from connectors.marketing.operations.events import EventOperations
from connectors.marketing.operations.kpis import KpiOperations
from connectors.marketing.operations.pagination import PaginationLimitError, PaginationOperations
from connectors.marketing.query import ENCODINGS, Encoding, Query
from connectors.marketing.resources import SyncResource
from connectors.marketing.transport import DEFAULT_TIMEOUT, ApiTransport, TransportStats

__all__ = ["MarketingClient", "PaginationLimitError", "Query", "sync_resource"]


class MarketingClient(
    CommerceOperations,
    ContactOperations,
    CustomDataOperations,
    EventOperations,
    KpiOperations,
    PaginationOperations,
):
    """Async client of the Marketing Automation Data API (use ``async with``).

    ``query_encoding`` picks how listing queries travel (``brackets`` or ``json``, the
    spec's two encodings); both mean the same to the API. ``breaker``, shared by all the
    requests of a run, takes the API as down after a stretch in which every request failed
    (``DestinationDown``); without one, each request is bounded by ``retry`` alone.
    ``pacer``, when given, is waited on before each attempt: the request budget of the key
    (the engine's is shared by every process writing with it); without one, no pacing.
    """

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
        query_encoding: Encoding = "brackets",
        breaker: CircuitBreaker | None = None,
        pacer: Pacing | None = None,
    ) -> None:
        if query_encoding not in ENCODINGS:
            raise ClientConfigError(
                f"query_encoding must be one of {', '.join(ENCODINGS)}, got {query_encoding!r}"
            )
        self.query_encoding = query_encoding
        self.transport = ApiTransport(
            base_url,
            api_key,
            kpi_api_key=kpi_api_key,
            retry=retry,
            timeout=timeout,
            max_connections=max_connections,
            transport=transport,
            breaker=breaker,
            pacer=pacer,
        )

    def __repr__(self) -> str:
        return f"MarketingClient(base_url={self.transport.base_url!r})"

    async def __aenter__(self) -> Self:
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
        self, resource: str, items: Sequence[dict[str, Any] | orjson.Fragment], *,
        parent_id: str | int | None = None,
    ) -> BulkResult:
        """POST: insert or update each item by its id within shop and data source (an item
        may be given as its JSON, already encoded: ``orjson.Fragment``).

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
        self, resource: str, items: Sequence[dict[str, Any] | orjson.Fragment], *,
        parent_id: str | int | None = None,
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
        """``GET data-sources`` (listDataSources): all of them, active or not, in one page."""
        answer = await self.transport.request("GET", "data-sources")
        return ListPage[DataSource].model_validate(answer)

    async def create_data_source(
        self,
        label: str,
        type: str = "api",
        *,
        config: str | None = None,
        parent_id: int | None = None,
        is_default: bool = False,
    ) -> DataSource:
        """``POST data-sources``. Not retried on a server error: a retry could create a
        second source (``find_or_create_data_source`` is the safe way to ensure one)."""
        body = {**body_of(label=label, type=type, config=config, parent_id=parent_id),
                "is_default": is_default}
        answer = await self.transport.request("POST", "data-sources", json=body, idempotent=False)
        return Single[DataSource].model_validate(answer).data

    async def update_data_source(self, id_data_source: int, **changes: Any) -> DataSource:
        """``PUT data-sources/{id}``: change label, type, config, parent_id, is_default, active."""
        answer = await self.transport.request(
            "PUT", f"data-sources/{seg(id_data_source)}", json=changes
        )
        return Single[DataSource].model_validate(answer).data

    async def delete_data_source(self, id_data_source: int) -> None:
        """``DELETE data-sources/{id}`` (idempotent)."""
        await self.transport.request("DELETE", f"data-sources/{seg(id_data_source)}")

    async def find_or_create_data_source(
        self, label: str, type: str = "api", **options: Any
    ) -> DataSource:
        """The data source with this label and type, created when the shop has none.

        Lets configuration name a source by label and get its id, run after run, without
        creating duplicates. A create the API answers with a 5xx (or a dropped connection)
        may still have happened, so it is not sent again as is: the whole lookup is tried
        again under the retry policy, and finds the data source if it was made.
        """
        async for attempt in async_retrying(
            self.transport.retry, retry=tenacity.retry_if_exception_type(TransientError)
        ):
            with attempt:
                for source in (await self.list_data_sources()).data:
                    if source.label == label and source.type == type:
                        return source
                return await self.create_data_source(label, type, **options)
        raise AssertionError("unreachable: the retry loop returns or raises")
