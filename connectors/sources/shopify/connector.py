"""Shopify (Admin GraphQL API) as a source: the streams, their positions, how each is read.

| stream        | query                              | read        | position                 |
|---------------|------------------------------------|-------------|--------------------------|
| orders        | orders + lineItems                 | incremental | updatedAt, numeric id    |
| customers     | customers (+ addresses)            | incremental | updatedAt, numeric id    |
| products      | products + variants, collections, media | incremental | updatedAt, numeric id |
| categories    | collections                        | incremental | updatedAt, numeric id    |
| vouchers      | codeDiscountNodes (+ codes)        | incremental | codeDiscount.updatedAt, id |
| carts         | abandonedCheckouts + lineItems     | incremental | updatedAt, numeric id    |
| statuses      | __type(OrderDisplayFinancialStatus)| full        | epoch, enum value        |
| manufacturers | productVendors                     | full        | epoch, vendor name       |

Orders, customers and products switch to bulk operations for large windows (paging.py).
Deletions: ``deleted_ids`` reads ``events`` with ``action:destroy`` (orders, customers,
products, collections, discount codes); ``ids`` lists every id of a stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any, Self

import httpx
from pydantic import SecretStr

from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, RawRecord, StreamInfo, UnsupportedStream
from connectors.sources.shopify import queries
from connectors.sources.shopify.bulk import gid_number
from connectors.sources.shopify.client import ShopifyClient
from connectors.sources.shopify.config import ShopifyConfig
from connectors.sources.shopify.paging import Pager
from connectors.sources.shopify.throttle import CostBudget

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
STREAMS: dict[str, StreamInfo] = {
    s.name: s for s in (
        StreamInfo("statuses", False, "order financial statuses (the enum, by introspection)"),
        StreamInfo("manufacturers", False, "product vendors"),
        StreamInfo("categories", True, "collections"),
        StreamInfo("customers", True, "customers with their addresses"),
        StreamInfo("products", True, "products with variants, collections and images"),
        StreamInfo("vouchers", True, "code discounts with their codes"),
        StreamInfo("orders", True, "orders with line items"),
        StreamInfo("carts", True, "abandoned checkouts with line items (recovered ones too)"),
    )
}
#: stream -> the subject type of its ``destroy`` events
DELETION_SUBJECTS = {"orders": "ORDER", "customers": "CUSTOMER", "products": "PRODUCT",
                     "categories": "COLLECTION", "vouchers": "DISCOUNT_CODE_NODE"}


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text).astimezone(UTC)


def position_of(stream: str, record: RawRecord) -> Position:
    """(updatedAt in UTC, numeric id): GIDs end in the REST id, which sorts as a number;
    discount codes keep their change time under ``codeDiscount``; the enum values and
    vendors have no dates and sit at the epoch, keyed by name."""
    if stream in ("statuses", "manufacturers"):
        return Position(EPOCH, str(record["name"]))
    holder = record.get("codeDiscount") or {} if stream == "vouchers" else record
    changed = _parse(holder.get("updatedAt")) or _parse(holder.get("createdAt")) or EPOCH
    return Position(changed, gid_number(str(record["id"])))


class ShopifyConnector:
    """Reads one Shopify shop; see the module docstring for the streams.

    ``until`` should lie a few seconds in the past: a record changed later in the very
    second a read ended, with a smaller id than the last one read, would sort before the
    checkpoint and be missed.
    """

    platform = "shopify"

    def __init__(self, shop_url: str | ShopifyConfig, access_token: str | SecretStr | None = None,
                 *, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None, **options: Any) -> None:
        """Either a ``ShopifyConfig`` or the shop's URL and token plus any other
        ``ShopifyConfig`` field as a keyword (``api_version="2025-07"``)."""
        if isinstance(shop_url, ShopifyConfig):
            config = (ShopifyConfig.model_validate({**shop_url.model_dump(), **options})
                      if options else shop_url)
        else:
            config = ShopifyConfig.model_validate(
                {"shop_url": shop_url, "access_token": access_token, **options})
        self.config = config
        self.client = ShopifyClient(config, retry=retry, transport=transport)
        self.pager = Pager(self.client)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shop_url={self.config.shop_url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def budget(self) -> CostBudget:
        """The shop's cost budget as this process sees it (shared by its connectors)."""
        return self.client.budget

    def streams(self) -> Mapping[str, StreamInfo]:
        return STREAMS

    def _stream(self, name: str) -> StreamInfo:
        if name not in STREAMS:
            raise UnsupportedStream(f"Shopify has no stream {name!r}; streams:"
                                    f" {', '.join(STREAMS)}")
        return STREAMS[name]

    async def check(self) -> None:
        """One cheap authenticated query; SourceAuthError when the token is refused."""
        await self.client.execute(queries.SHOP)

    def position(self, stream: str, record: RawRecord) -> Position:
        self._stream(stream)
        return position_of(stream, record)

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of ``stream``: incremental streams strictly after ``after`` and up to
        ``until`` in ascending position order; full streams whole (both ignored)."""
        self._stream(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        if stream == "statuses":
            return self._statuses()
        if stream == "manufacturers":
            return self._vendors()
        return self.pager.incremental(queries.SPECS[stream],
                                      lambda r: position_of(stream, r), after, until)

    async def _statuses(self) -> AsyncIterator[list[RawRecord]]:
        data = await self.client.execute(queries.STATUSES)
        values = (data.get("__type") or {}).get("enumValues") or []
        if values:
            yield [dict(v) for v in values]

    async def _vendors(self) -> AsyncIterator[list[RawRecord]]:
        after = None
        while True:
            data = await self.pager.fitted("productVendors", queries.VENDORS, {"after": after}, 250)
            connection = data.get("productVendors") or {}
            if names := connection.get("nodes"):
                yield [{"name": name} for name in names]
            info = connection.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")

    async def deleted_ids(self, stream: str, *, since: datetime | None) -> list[str] | None:
        """Ids of records of ``stream`` deleted since ``since``, from ``destroy`` events.

        None for streams whose deletions Shopify does not log (abandoned checkouts; the enum
        and vendor lists, read whole anyway): the caller compares ``ids()`` for those."""
        self._stream(stream)
        if stream not in DELETION_SUBJECTS:
            return None
        terms = [f"action:destroy AND subject_type:{DELETION_SUBJECTS[stream]}"]
        if since is not None:
            terms.append(f"created_at:>='{queries.stamp(since)}'")
        found: list[str] = []
        after = None
        while True:
            data = await self.pager.fitted("events", queries.DELETIONS,
                                           {"after": after, "query": " AND ".join(terms)}, 250)
            connection = data.get("events") or {}
            found += [gid_number(str(n["subjectId"])) for n in connection.get("nodes") or []
                      if n.get("subjectId")]
            info = connection.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return list(dict.fromkeys(found))
            after = info.get("endCursor")

    async def ids(self, stream: str) -> AsyncIterator[list[str]]:
        """Pages of every id currently in ``stream`` (cheap: ``id`` only, 250 a page)."""
        self._stream(stream)
        if stream in ("statuses", "manufacturers"):
            async for page in self.read(stream):
                yield [str(r["name"]) for r in page]
            return
        async for batch in self.pager.ids(queries.SPECS[stream]):
            yield batch
