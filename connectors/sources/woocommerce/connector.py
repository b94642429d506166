"""WooCommerce (REST API v3) as a source: the streams, their positions, how each is read.

| stream     | endpoint                          | read        | position                     |
|------------|-----------------------------------|-------------|------------------------------|
| orders     | orders (any + trash)              | incremental | date_modified_gmt, id        |
| products   | products (any + trash), variations| incremental | date_modified_gmt, id        |
| coupons    | coupons                           | incremental | date_modified_gmt, id        |
| customers  | customers?role=…                  | full        | date_modified_gmt (or created), id |
| categories | products/categories               | full        | none (epoch), id             |
| statuses   | reports/orders/totals             | full        | none (epoch), slug           |

There is no ``carts`` stream: WooCommerce has no carts API (see UNSUPPORTED).

Deletions: a trashed order or product is read as a change (status ``trash``); a record
deleted for good (``force=true``, and always for customers and categories) leaves no trace,
and a trashed coupon is no longer listed: ``ids`` lists what a read would return, for the
caller to compare id sets.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any, Self

import httpx
from pydantic import SecretStr

from connectors.http.pacing import Pacing
from connectors.http.retry import RetryPolicy
from connectors.sources.base import (
    Position,
    RawRecord,
    StreamInfo,
    UnsupportedStream,
)
from connectors.sources.woocommerce.client import WooClient, WooCommerceApiError, WooPage
from connectors.sources.woocommerce.config import WooCommerceConfig
from connectors.sources.woocommerce.paging import incremental, merge, walk

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: draft orders made when a shopper opens the block checkout: carts, not orders; older
#: WooCommerce versions list them under status=any, newer ones do not, so they are dropped
CHECKOUT_DRAFT = "checkout-draft"
#: records per page of an id listing (WooCommerce's maximum; two fields a record)
ID_PAGE = 100

STREAMS: dict[str, StreamInfo] = {
    s.name: s for s in (
        StreamInfo("orders", True, "orders with line_items, trashed ones included"),
        StreamInfo("products", True, "products, each with its variations under _variations"),
        StreamInfo("coupons", True, "coupons (vouchers); trashed coupons are not listed"),
        StreamInfo("customers", False, "registered customers: the API cannot filter them by"
                                       " change time; guests exist only inside orders"),
        StreamInfo("categories", False, "product categories, with their parent"),
        StreamInfo("statuses", False, "order statuses (slug, name, total)"),
    )
}
UNSUPPORTED = {
    "carts": "WooCommerce has no carts API: carts live in the shopper's session and are not"
             " exposed by the REST API v3. Abandoned carts need a plugin with its own API;"
             " block-checkout 'checkout-draft' orders are not a reliable substitute.",
}


def _parse_gmt(text: str | None) -> datetime | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def position_of(stream: str, record: RawRecord) -> Position:
    """(date_modified_gmt, id): naive GMT made aware; a record never modified (customers can
    have a null date_modified) falls back to its creation; records without dates (categories,
    statuses) sit at the epoch, keyed by id or slug."""
    if stream == "statuses":
        return Position(EPOCH, str(record["slug"]))
    if stream == "categories":
        return Position(EPOCH, str(record["id"]))
    changed = (_parse_gmt(record.get("date_modified_gmt"))
               or _parse_gmt(record.get("date_created_gmt")) or EPOCH)
    return Position(changed, str(record["id"]))


class WooCommerceConnector:
    """Reads one WooCommerce shop; see the module docstring for the streams.

    ``until`` should lie a few seconds in the past: a record changed later in the very
    second a read ended, with a smaller id than the last one read, would sort before the
    checkpoint and be missed.
    """

    platform = "woocommerce"

    def __init__(
        self,
        base_url: str | WooCommerceConfig,
        consumer_key: str | SecretStr | None = None,
        consumer_secret: str | SecretStr | None = None,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        pacer: Pacing | None = None,
        **options: Any,
    ) -> None:
        """Either a ``WooCommerceConfig`` or the shop's URL, key and secret plus any other
        ``WooCommerceConfig`` field as a keyword (``page_size=50``). ``pacer``: what each request waits
        on, default ``requests_per_second`` paced in this process alone."""
        if isinstance(base_url, WooCommerceConfig):
            config = (WooCommerceConfig.model_validate({**base_url.model_dump(), **options})
                      if options else base_url)
        else:
            config = WooCommerceConfig.model_validate(
                {"base_url": base_url, "consumer_key": consumer_key,
                 "consumer_secret": consumer_secret, **options})
        self.config = config
        self.client = WooClient(config, retry=retry, transport=transport, pacer=pacer)

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
            raise UnsupportedStream(
                f"WooCommerce has no stream {name!r}; streams: {', '.join(STREAMS)}")
        return STREAMS[name]

    async def check(self) -> None:
        """One cheap authenticated request; SourceAuthError when the key is refused."""
        await self.client.get("orders", {"per_page": 1, "_fields": "id"})

    def position(self, stream: str, record: RawRecord) -> Position:
        self._stream(stream)
        return position_of(stream, record)

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of ``stream``: incremental streams strictly after ``after`` and up to
        ``until`` in ascending position order; full streams whole (both ignored).

        Raises UnsupportedStream at once for ``carts`` and unknown names.
        """
        info = self._stream(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        if not info.incremental:
            return self._full(stream)
        if stream == "orders":
            return self._orders(after, until)
        if stream == "products":
            return self._products(after, until)
        return self._incremental("coupons", {}, after, until)

    async def ids(self, stream: str) -> AsyncIterator[list[str]]:
        """Pages of every id ``read`` would return now (trash and draft rules alike), for
        finding deletions: WooCommerce keeps no log of records deleted for good
        (``DELETE …?force=true``), so only a comparison of id sets finds them. Asks for
        ``id`` and ``status`` only, 100 a page."""
        self._stream(stream)
        if stream == "statuses":
            async for page in self._full(stream):
                yield [str(s["slug"]) for s in page]
            return
        for path, params in self._listings(stream):
            query = {**params, "orderby": "id", "order": "asc", "_fields": "id,status"}
            async for page in walk(self._fetch, path, query, ID_PAGE):
                found = [str(r["id"]) for r in page
                         if not (stream == "orders" and r.get("status") == CHECKOUT_DRAFT)]
                if found:
                    yield found

    def _listings(self, stream: str) -> list[tuple[str, dict[str, Any]]]:
        """The listings ``read`` takes ``stream`` from, (path, filters): what ``ids`` lists
        is what a read returns, so a record is gone exactly when neither finds it."""
        if stream in ("orders", "products"):
            statuses = ["any", "trash"] if self.config.include_trash else ["any"]
            return [(stream, {"status": status}) for status in statuses]
        return [{
            "coupons": ("coupons", {}),
            "customers": ("customers", {"role": self.config.customer_role}),
            "categories": ("products/categories", {}),
        }[stream]]

    # full streams ----------------------------------------------------------------------

    async def _full(self, stream: str) -> AsyncIterator[list[RawRecord]]:
        if stream == "statuses":
            statuses = (await self._fetch("reports/orders/totals", {})).records
            if statuses:
                yield statuses
            return
        ((path, params),) = self._listings(stream)
        async for page in walk(self._fetch, path, {**params, "orderby": "id", "order": "asc"},
                               self.config.page_size):
            yield page

    # incremental streams ---------------------------------------------------------------

    async def _fetch(self, path: str, params: dict[str, Any]) -> WooPage:
        return await self.client.get(path, params)

    def _incremental(self, stream: str, params: dict[str, Any], after: Position | None,
                     until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        return incremental(self._fetch, stream, params,
                           position=lambda r: self.position(stream, r), after=after,
                           until=until, page_size=self.config.page_size)

    def _with_trash(self, stream: str, after: Position | None,
                    until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        """The default listing (status=any never includes trash) merged with the trash, so
        that trashing a record reaches the target as a change."""
        live, *trash = (self._incremental(stream, params, after, until)
                        for _, params in self._listings(stream))
        if not trash:
            return live
        return merge([live, *trash], lambda r: self.position(stream, r), self.config.page_size)

    async def _orders(self, after: Position | None,
                      until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        async for page in self._with_trash("orders", after, until):
            orders = [o for o in page if o.get("status") != CHECKOUT_DRAFT]
            if orders:
                yield orders

    async def _products(self, after: Position | None,
                        until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        limit = asyncio.Semaphore(self.config.variation_concurrency)
        async for page in self._with_trash("products", after, until):
            await asyncio.gather(*(self._attach_variations(p, limit) for p in page))
            yield page

    async def _attach_variations(self, product: RawRecord, limit: asyncio.Semaphore) -> None:
        """``_variations``: the product's variations (an empty list for other types), for
        the mapping layer to emit one item per variation."""
        product["_variations"] = []
        if product.get("type") != "variable" or product.get("status") == "trash":
            return
        path = f"products/{product['id']}/variations"
        async with limit:
            try:
                async for batch in walk(self._fetch, path, {"orderby": "id", "order": "asc"},
                                        self.config.page_size):
                    product["_variations"].extend(batch)
            except WooCommerceApiError as exc:
                if exc.status != 404:  # deleted since it was listed: no variations left
                    raise
