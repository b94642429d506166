"""What every group of operations shares: the transport and the three answer shapes.

The operation mixins (one module per area of the API) only name routes and bodies; how a
listing query is encoded, how an envelope is unwrapped and how a path segment is escaped is
decided here, once.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from connectors.marketing.models import BulkResult, ListPage, Record, Single
from connectors.marketing.query import Encoding, Query
from connectors.marketing.transport import ApiTransport


def seg(value: str | int) -> str:
    """A path segment, escaped so an id like ``A/B`` cannot change the route."""
    return quote(str(value), safe="")


def body_of(**fields: Any) -> dict[str, Any]:
    """A JSON body from keyword arguments, leaving out those not given (None)."""
    return {k: v for k, v in fields.items() if v is not None}


class Operations:
    """Base of the operation mixins; ``MarketingClient`` sets both attributes."""

    transport: ApiTransport
    query_encoding: Encoding

    async def _list(self, path: str, query: Query | None) -> ListPage[Record]:
        """GET a common listing: limit, offset, fields, filters, orFilters, order."""
        params = (query or Query()).to_params(self.query_encoding)
        answer = await self.transport.request("GET", path, params=params)
        return ListPage[Record].model_validate(answer)

    async def _event_list(self, path: str, query: Query | None) -> ListPage[Record]:
        """GET an event listing: paging, order and filters travel in the JSON ``settings``."""
        params = (query or Query()).to_event_params()
        answer = await self.transport.request("GET", path, params=params)
        return ListPage[Record].model_validate(answer)

    async def _data(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        json: Any = None,
        idempotent: bool = True,
    ) -> Any:
        """Send a request answered with the single envelope and return its ``data``."""
        answer = await self.transport.request(
            method, path, params=params, json=json, idempotent=idempotent
        )
        return Single[Any].model_validate(answer).data

    async def _done(self, method: str, path: str, *, params: Any = None, json: Any = None) -> None:
        """Send a request whose answer only says it succeeded (deletes, single updates)."""
        await self.transport.request(method, path, params=params, json=json)

    async def _bulk(self, method: str, path: str, json: Any) -> BulkResult:
        answer = await self.transport.request(method, path, json=json)
        return BulkResult.model_validate(answer)
