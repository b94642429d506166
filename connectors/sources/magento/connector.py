"""Magento 2 / Adobe Commerce (REST) as a source: the streams, their positions, how each is read.

| stream     | endpoint                              | read        | position                |
|------------|---------------------------------------|-------------|-------------------------|
| orders     | orders                                | incremental | updated_at, entity_id   |
| customers  | customers/search                      | incremental | updated_at, id          |
| products   | products (+ configurable children)    | incremental | updated_at, id          |
| carts      | carts/search (quotes)                 | incremental | updated_at, id          |
| categories | categories/list                       | incremental | updated_at, id          |
| statuses   | none (Magento has no REST list)       | full        | none (epoch), code      |

Times are UTC without an offset whatever the store's timezone. Magento keeps no deletion
log: ``ids()`` lists every id of a stream cheaply (``fields=items[id]``) so that deletions
are found by comparing id sets.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any, Self
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, RawRecord, StreamInfo, UnsupportedStream
from connectors.sources.magento.client import MagentoApiError, MagentoClient
from connectors.sources.magento.config import MagentoConfig
from connectors.sources.magento.paging import criteria, ids, incremental, parse_time

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

STREAMS: dict[str, StreamInfo] = {
    s.name: s for s in (
        StreamInfo("orders", True, "orders with their items (a configurable sold is a parent"
                                   " item and a child item)"),
        StreamInfo("customers", True, "registered customers with their addresses; guests"
                                      " live in orders"),
        StreamInfo("products", True, "products of every type; configurables carry their"
                                     " child products under _children"),
        StreamInfo("carts", True, "quotes: active carts and, unless active_carts_only, the"
                                  " ordered ones; each item carries _product_id"),
        StreamInfo("categories", True, "categories with their parent"),
        StreamInfo("statuses", False, "order statuses: Magento's defaults plus the"
                                      " order_statuses option (no REST endpoint lists them)"),
    )
}
#: stream -> (path under /V1, the id column searchCriteria filters on, the id key of records)
ENDPOINTS = {
    "orders": ("orders", "entity_id", "entity_id"),
    "customers": ("customers/search", "entity_id", "id"),
    "products": ("products", "entity_id", "id"),
    "carts": ("carts/search", "entity_id", "id"),
    "categories": ("categories/list", "entity_id", "id"),
}
#: target resources Magento does not feed, and why
UNSUPPORTED = {
    "vouchers": "not read from Magento yet: cart price rules and their coupons"
                " (salesRules/search, coupons/search) have no mapping in shopsync",
    "manufacturers": "Magento has no manufacturer entity: `manufacturer` is a product"
                     " attribute's option list, not a resource with its own API",
    "groups": "customer groups (customerGroups/search) are not read from Magento yet",
}
#: Magento's order statuses out of the box: (code, label, state) as in sales_order_status
DEFAULT_STATUSES = (
    ("pending", "Pending", "new"), ("pending_payment", "Pending Payment", "pending_payment"),
    ("processing", "Processing", "processing"), ("holded", "On Hold", "holded"),
    ("complete", "Complete", "complete"), ("closed", "Closed", "closed"),
    ("canceled", "Canceled", "canceled"), ("fraud", "Suspected Fraud", "payment_review"),
    ("payment_review", "Payment Review", "payment_review"),
    ("pending_paypal", "Pending PayPal", "new"),
    ("paypal_reversed", "PayPal Reversed", "processing"),
    ("paypal_canceled_reversal", "PayPal Canceled Reversal", "processing"),
)


def position_of(stream: str, record: RawRecord) -> Position:
    """(updated_at, id): Magento's UTC text made aware; a record without ``updated_at``
    falls back to its creation; statuses sit at the epoch, keyed by code."""
    if stream == "statuses":
        return Position(EPOCH, str(record["status"]))
    id_key = ENDPOINTS[stream][2]
    changed = (parse_time(record.get("updated_at")) or parse_time(record.get("created_at"))
               or EPOCH)
    return Position(changed, str(record[id_key]))


class MagentoConnector:
    """Reads one Magento store view; see the module docstring for the streams.

    ``until`` should lie a few seconds in the past: a record changed later in the very
    second a read ended, with a smaller id than the last one read, would sort before the
    checkpoint and be missed.
    """

    platform = "magento"

    def __init__(self, base_url: str | MagentoConfig, token: str | SecretStr | None = None, *,
                 retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None, **options: Any) -> None:
        """Either a ``MagentoConfig`` or the REST root and token plus any other
        ``MagentoConfig`` field as a keyword (``page_size=300``)."""
        if isinstance(base_url, MagentoConfig):
            config = (MagentoConfig.model_validate({**base_url.model_dump(), **options})
                      if options else base_url)
        else:
            config = MagentoConfig.model_validate({"base_url": base_url, "token": token,
                                                   **options})
        self.config = config
        self.client = MagentoClient(config, retry=retry, transport=transport)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.config.base_url!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.client.aclose()

    def streams(self) -> Mapping[str, StreamInfo]:
        return STREAMS

    def _stream(self, name: str) -> StreamInfo:
        if name in UNSUPPORTED:
            raise UnsupportedStream(UNSUPPORTED[name])
        if name not in STREAMS:
            raise UnsupportedStream(f"Magento has no stream {name!r}; streams: {', '.join(STREAMS)}")
        return STREAMS[name]

    async def check(self) -> None:
        """One cheap authenticated request; SourceAuthError when the token is refused."""
        await self.client.get("orders", {**criteria([], page_size=1),
                                         "fields": "items[entity_id],total_count"})

    def position(self, stream: str, record: RawRecord) -> Position:
        self._stream(stream)
        return position_of(stream, record)

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of ``stream`` strictly after ``after`` and up to ``until`` in ascending
        position order (statuses: whole, both ignored).

        Raises UnsupportedStream at once for unknown names.
        """
        self._stream(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        if stream == "statuses":
            return self._statuses()
        return self._incremental(stream, after, until)

    async def ids(self, stream: str) -> AsyncIterator[list[str]]:
        """Pages of every id of ``stream`` (what ``position().record_id`` holds), for
        finding deletions: Magento keeps no log of them."""
        self._stream(stream)
        if stream == "statuses":
            yield [str(s["status"]) for s in self.statuses()]
            return
        path, id_field, id_key = ENDPOINTS[stream]
        async for page in ids(self._fetch, path, id_field=id_field, id_key=id_key,
                              page_size=self.config.page_size, groups=self._groups(stream)):
            yield page

    # streams ---------------------------------------------------------------------------

    def statuses(self) -> list[RawRecord]:
        """Magento's default statuses, relabelled or extended by ``order_statuses``."""
        labels = {code: (label, state) for code, label, state in DEFAULT_STATUSES}
        for code, label in self.config.order_statuses.items():
            labels[code] = (label, labels.get(code, ("", ""))[1])
        return [{"status": code, "label": label, "state": state}
                for code, (label, state) in labels.items()]

    async def _statuses(self) -> AsyncIterator[list[RawRecord]]:
        yield self.statuses()

    def _groups(self, stream: str) -> list[list[tuple[str, str, str]]]:
        if stream == "carts" and self.config.active_carts_only:
            return [[("is_active", "1", "eq")]]
        return []

    async def _fetch(self, path: str, params: dict[str, Any]) -> Any:
        return await self.client.get(path, params)

    async def _incremental(self, stream: str, after: Position | None,
                           until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        path, id_field, _ = ENDPOINTS[stream]
        skus: dict[str, int | None] = {}
        limit = asyncio.Semaphore(self.config.variation_concurrency)
        async for page in incremental(self._fetch, path, id_field=id_field,
                                      position=lambda r: position_of(stream, r), after=after,
                                      until=until, page_size=self.config.page_size,
                                      groups=self._groups(stream)):
            if stream == "carts":
                await self._attach_product_ids(page, skus)
            elif stream == "products" and self.config.variations:
                await asyncio.gather(*(self._attach_children(p, limit) for p in page))
            yield page

    async def _attach_product_ids(self, carts: list[RawRecord], known: dict[str, int | None]) -> None:
        """``_product_id`` on each cart item: cart items name their product by SKU only
        (for a configurable, the chosen child's SKU). One lookup per page of carts."""
        wanted = sorted({str(item["sku"]) for cart in carts for item in cart.get("items") or []
                         if item.get("sku") and str(item["sku"]) not in known})
        size = self.config.page_size
        for start in range(0, len(wanted), size):
            chunk = [sku for sku in wanted[start:start + size] if "," not in sku]
            for sku in wanted[start:start + size]:
                known.setdefault(sku, None)
            if not chunk:
                continue
            body = await self._fetch("products", {
                **criteria([[("sku", ",".join(chunk), "in")]], page_size=len(chunk)),
                "fields": "items[id,sku]"})
            for product in body.get("items") or []:
                known[str(product["sku"])] = int(product["id"])
        for cart in carts:
            for item in cart.get("items") or []:
                item["_product_id"] = known.get(str(item.get("sku")))

    async def _attach_children(self, product: RawRecord, limit: asyncio.Semaphore) -> None:
        """``_children``: the simple products of a configurable one (empty for other types),
        for the mapping to emit one variation per child."""
        product["_children"] = []
        if product.get("type_id") != "configurable":
            return
        async with limit:
            try:
                children = await self._fetch(
                    f"configurable-products/{quote(str(product['sku']), safe='')}/children", {})
            except MagentoApiError as exc:
                if exc.status != 404:  # deleted since it was listed: no children left
                    raise
                return
        product["_children"] = children if isinstance(children, list) else []
