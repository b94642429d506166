"""PrestaShop (webservice, 1.7 and 8.x) as a source: the streams, their positions, how each
is read.

| stream        | resource                          | read        | position         |
|---------------|-----------------------------------|-------------|------------------|
| order_states  | order_states                      | full        | none (epoch), id |
| carriers      | carriers                          | full        | none (epoch), id |
| groups        | groups                            | incremental | date_upd, id     |
| categories    | categories                        | incremental | date_upd, id     |
| manufacturers | manufacturers                     | incremental | date_upd, id     |
| customers     | customers                         | incremental | date_upd, id     |
| addresses     | addresses (of customers)          | incremental | date_upd, id     |
| products      | products + combinations           | incremental | date_upd, id     |
| cart_rules    | cart_rules                        | incremental | date_upd, id     |
| orders        | orders (+ customer email)         | incremental | date_upd, id     |
| carts         | carts without an order (+ prices) | incremental | date_upd, id     |

Every record carries ``_shop`` (time zone, languages, currencies: see shop.py) and what
enrich.py adds. PrestaShop has no deletion log: ``ids()`` lists every id of a stream
cheaply (``display=[id]``) so deletions show up by comparing id sets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

import httpx
from pydantic import SecretStr

from connectors.http.pacing import Pacing
from connectors.http.retry import RetryPolicy
from connectors.sources.base import Position, RawRecord, SourceError, StreamInfo, UnsupportedStream
from connectors.sources.prestashop import shop
from connectors.sources.prestashop.client import PrestaShopClient
from connectors.sources.prestashop.config import PrestaShopConfig
from connectors.sources.prestashop.enrich import Enricher
from connectors.sources.prestashop.paging import by_id, changed, changed_by_id
from connectors.sources.prestashop.values import EPOCH, as_int, listed, local_to_utc


@dataclass(frozen=True)
class Stream:
    resource: str
    incremental: bool
    description: str
    params: dict[str, str] = field(default_factory=dict)


SPECS: dict[str, Stream] = {
    "order_states": Stream("order_states", False, "order statuses (no dates: read whole)"),
    "carriers": Stream("carriers", False, "carriers, deleted ones included (no dates)"),
    "groups": Stream("groups", True, "customer groups"),
    "categories": Stream("categories", True, "product categories, Root and Home included"),
    "manufacturers": Stream("manufacturers", True, "manufacturers (brands)"),
    "customers": Stream("customers", True, "customers, guests and deleted ones included"),
    "addresses": Stream("addresses", True, "customers' addresses (not brands' or suppliers')",
                        {"filter[id_customer]": ">[0]"}),
    "products": Stream("products", True, "products, each with its combinations"),
    "cart_rules": Stream("cart_rules", True, "cart rules (vouchers)"),
    "orders": Stream("orders", True, "orders with their rows and the customer's email"),
    "carts": Stream("carts", True, "carts without an order (abandoned), with unit prices"),
}
STREAMS: dict[str, StreamInfo] = {
    name: StreamInfo(name, spec.incremental, spec.description) for name, spec in SPECS.items()}
#: the lookup tables some streams need, read once per connector
TABLES = {"countries": "[id,iso_code]", "product_options": "full", "product_option_values": "full"}


class PrestaShopConnector:
    """Reads one PrestaShop shop through its webservice; see the module docstring.

    ``until`` should lie a few seconds in the past: a record saved later in the very second
    a read ended, with a smaller id than the last one read, would sort before the
    checkpoint and be missed.
    """

    platform = "prestashop"

    def __init__(self, base_url: str | PrestaShopConfig, key: str | SecretStr | None = None, *,
                 retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 pacer: Pacing | None = None, **options: Any) -> None:
        """Either a ``PrestaShopConfig`` or the shop's URL and key plus any other
        ``PrestaShopConfig`` field as a keyword (``timezone="Europe/Paris"``). ``pacer``: what each request waits
        on, default ``requests_per_second`` paced in this process alone."""
        if isinstance(base_url, PrestaShopConfig):
            config = (PrestaShopConfig.model_validate({**base_url.model_dump(), **options})
                      if options else base_url)
        else:
            config = PrestaShopConfig.model_validate({"base_url": base_url, "key": key, **options})
        self.config = config
        self.client = PrestaShopClient(config, retry=retry, transport=transport, pacer=pacer)
        self._context: shop.ShopContext | None = None
        self._tables: dict[str, dict[str, dict[str, Any]]] = {}
        self._lock = asyncio.Lock()

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

    def _spec(self, name: str) -> Stream:
        if name not in SPECS:
            raise UnsupportedStream(
                f"PrestaShop has no stream {name!r}; streams: {', '.join(SPECS)}")
        return SPECS[name]

    async def context(self) -> shop.ShopContext:
        """The shop's languages, currencies and time zone (read once)."""
        async with self._lock:
            if self._context is None:
                self._context = await shop.load(self.client.get, self.config)
            return self._context

    async def check(self) -> None:
        """Reads the languages, currencies and settings the connector needs: a refused key
        raises SourceAuthError, a switched-off webservice a SourceError."""
        self._context = None
        await self.context()

    @property
    def timezone(self) -> str:
        zone = self.config.timezone or (self._context.timezone if self._context else None)
        if zone is None:
            raise SourceError("the shop's time zone is not known yet: read or check first,"
                              " or set connection.options.timezone")
        return zone

    def position(self, stream: str, record: RawRecord) -> Position:
        spec = self._spec(stream)
        return position_of(record, self.timezone if spec.incremental else None)

    async def _table(self, resource: str) -> dict[str, dict[str, Any]]:
        if resource not in self._tables:
            rows = await shop.table(self.client.get, resource, TABLES[resource])
            self._tables[resource] = {str(as_int(r.get("id"))): r for r in rows}
        return self._tables[resource]

    async def _fetch(self, resource: str, params: dict[str, Any]) -> list[RawRecord]:
        return listed(await self.client.get(resource, params), resource)

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of ``stream``: incremental streams strictly after ``after`` and up to
        ``until`` in ascending position order; full streams whole (both ignored).

        Raises UnsupportedStream at once for an unknown stream.
        """
        spec = self._spec(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        return self._read(stream, spec, after, until)

    def reads_by_key(self, stream: str) -> bool:
        """An incremental stream can be read in id order within a window of change time."""
        return self._spec(stream).incremental

    def read_by_key(self, stream: str, *, after_key: str | None, since: datetime | None,
                    until: datetime) -> AsyncIterator[list[RawRecord]]:
        """Pages of the records of ``stream`` changed from ``since`` up to ``until``, in id
        order, after the id ``after_key``: a first read, whose records a ledger keyed by id
        then takes in its own order."""
        spec = self._spec(stream)
        if not spec.incremental:
            raise SourceError(f"{stream} has no change time to read up to")
        if after_key is not None and not (after_key.isascii() and after_key.isdigit()):
            raise SourceError(f"{stream}: a read by id cannot resume after {after_key!r}")
        if until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        return self._read(stream, spec, None, until,
                          by_key=(int(after_key) if after_key else 0, since))

    async def _read(self, stream: str, spec: Stream, after: Position | None,
                    until: datetime | None, by_key: tuple[int, datetime | None] | None = None,
                    ) -> AsyncIterator[list[RawRecord]]:
        """The pages of a read by position, or by id when ``by_key`` is (the id to read
        after, the change time to read from)."""
        context = await self.context()
        params = dict(spec.params)
        if context.language_param:
            params["language"] = context.language_param
        if by_key is not None and until is not None:
            pages = changed_by_id(self._fetch, spec.resource, params,
                                  position=lambda r: position_of(r, context.timezone),
                                  since=by_key[1], until=until, timezone=context.timezone,
                                  page_size=self.config.page_size, after_id=by_key[0])
        elif spec.incremental:
            pages = changed(self._fetch, spec.resource, params,
                            position=lambda r: position_of(r, context.timezone), after=after,
                            until=until, timezone=context.timezone,
                            page_size=self.config.page_size)
        else:
            pages = by_id(self._fetch, spec.resource, {**params, "display": "full"},
                          self.config.page_size)
        enricher = Enricher(self.client.get, lookup_size=self.config.lookup_size,
                            page_size=self.config.page_size, tables=self._table)
        enrich = {"orders": enricher.orders, "carts": enricher.carts,
                  "products": enricher.products, "addresses": enricher.addresses,
                  "customers": enricher.customers_page}.get(stream)
        attached = context.as_record()
        async for page in pipelined(pages, enrich):
            for record in page:
                record["_shop"] = attached
            if page:
                yield page

    async def ids(self, stream: str) -> AsyncIterator[list[str]]:
        """Pages of every id of ``stream`` (``display=[id]``): compare with the ids known
        downstream to find deletions, which PrestaShop does not log."""
        spec = self._spec(stream)
        ordered: set[int] = set()
        if stream == "carts":  # a cart that became an order has left the stream
            async for page in by_id(self._fetch, "orders", {"display": "[id,id_cart]"},
                                    self.config.page_size):
                ordered.update(as_int(o.get("id_cart")) for o in page)
        async for page in by_id(self._fetch, spec.resource, {**spec.params, "display": "[id]"},
                                self.config.page_size):
            found = [str(as_int(r.get("id"))) for r in page if as_int(r.get("id")) not in ordered]
            if found:
                yield found


def position_of(record: RawRecord, timezone: str | None) -> Position:
    """(date_upd, id) with the shop-local date_upd turned into UTC; a record without a
    date_upd falls back to date_add, then the epoch; streams without dates (``timezone``
    None) sit at the epoch, ordered by id."""
    record_id = str(as_int(record.get("id")))
    if timezone is None:
        return Position(EPOCH, record_id)
    changed_at = (local_to_utc(record.get("date_upd"), timezone)
                  or local_to_utc(record.get("date_add"), timezone) or EPOCH)
    return Position(changed_at, record_id)


async def _next(pages: AsyncIterator[list[RawRecord]]) -> list[RawRecord]:
    return await anext(pages)


async def pipelined(pages: AsyncGenerator[list[RawRecord], None],
                    enrich: Callable[[list[RawRecord]], Awaitable[list[RawRecord]]] | None,
                    ) -> AsyncIterator[list[RawRecord]]:
    """``pages`` enriched, the next page fetched while the current one is enriched (the
    next page's query depends only on the current page, not on its lookups)."""
    if enrich is None:
        async for page in pages:
            yield page
        return
    upcoming = asyncio.create_task(_next(pages))
    try:
        while True:
            try:
                page = await upcoming
            except StopAsyncIteration:
                return
            upcoming = asyncio.create_task(_next(pages))
            yield await enrich(page)
    finally:
        if not upcoming.done():
            upcoming.cancel()
        # its outcome was raised above already, or is not wanted any more
        with contextlib.suppress(BaseException):
            await upcoming
        await pages.aclose()
