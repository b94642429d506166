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

A child of a configurable product changing leaves its parent's ``updated_at`` alone, yet the
parent's record (its ``_children``, hence its variations) changed: an incremental products
read re-reads such parents (see ``MagentoConnector._stale_parents``) and yields them at the
child's change time, so positions still ascend and the cursor never passes a record unread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Self
from urllib.parse import quote

import httpx
from pydantic import SecretStr

from connectors.http.pacing import Pacing
from connectors.http.retry import RetryPolicy
from connectors.sources.base import (
    Position,
    RawRecord,
    StreamInfo,
    UnsupportedStream,
    id_order,
)
from connectors.sources.magento.client import MagentoApiError, MagentoClient
from connectors.sources.magento.config import MagentoConfig
from connectors.sources.magento.paging import criteria, ids, incremental, parse_time, walk

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

STREAMS: dict[str, StreamInfo] = {
    s.name: s for s in (
        StreamInfo("orders", True, "orders with their items (a configurable sold is a parent"
                                   " item and a child item)"),
        StreamInfo("customers", True, "registered customers with their addresses; guests"
                                      " live in orders"),
        StreamInfo("products", True, "products of every type; configurables carry their"
                                     " child products under _children, and come again"
                                     " when only a child changed"),
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
#: the product types a configurable's children can be
CHILD_TYPES = frozenset({"simple", "virtual"})
#: what the child -> parent map needs of each configurable
PARENT_FIELDS = "items[id,updated_at,extension_attributes[configurable_product_links]]"
#: on a parent re-read for a changed child: its position's time, that child's change (ISO 8601)
RE_READ_AT = "_changed_at"
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
    falls back to its creation; a configurable re-read because a child changed sits at that
    child's change time (``_changed_at``); statuses sit at the epoch, keyed by code."""
    if stream == "statuses":
        return Position(EPOCH, str(record["status"]))
    id_key = ENDPOINTS[stream][2]
    changed = (parse_time(record.get(RE_READ_AT)) or parse_time(record.get("updated_at"))
               or parse_time(record.get("created_at")) or EPOCH)
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
                 transport: httpx.AsyncBaseTransport | None = None,
                 pacer: Pacing | None = None, **options: Any) -> None:
        """Either a ``MagentoConfig`` or the REST root and token plus any other
        ``MagentoConfig`` field as a keyword (``page_size=300``). ``pacer``: what each request waits
        on, default ``requests_per_second`` paced in this process alone."""
        if isinstance(base_url, MagentoConfig):
            config = (MagentoConfig.model_validate({**base_url.model_dump(), **options})
                      if options else base_url)
        else:
            config = MagentoConfig.model_validate({"base_url": base_url, "token": token,
                                                   **options})
        self.config = config
        self.client = MagentoClient(config, retry=retry, transport=transport, pacer=pacer)
        #: child product id -> its configurable parents (id, updated_at), built on first need
        self._parents: dict[str, list[tuple[str, Position]]] | None = None
        self._parents_lock = asyncio.Lock()

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

        def at(record: RawRecord) -> Position:
            return position_of(stream, record)

        #: parents re-read for a changed child, held until a page reaches their position
        waiting: list[RawRecord] = []
        re_read: set[str] = set()
        last = after
        async for page in incremental(self._fetch, path, id_field=id_field, position=at,
                                      after=after, until=until,
                                      page_size=self.config.page_size,
                                      groups=self._groups(stream)):
            if stream == "carts":
                await self._attach_product_ids(page, skus)
            elif stream == "products" and self.config.variations:
                await asyncio.gather(*(self._attach_children(p, limit) for p in page))
                if after is not None:  # a read from the start reads every parent anyway
                    waiting += await self._stale_parents(page, after, last or after, re_read,
                                                              limit)
                    # none may sort past the page's last record: the cursor would skip
                    # the records of that second still to come
                    end = at(page[-1])
                    ready = [p for p in waiting if at(p) <= end]
                    waiting = [p for p in waiting if end < at(p)]
                    page = sorted(page + ready, key=at) if ready else page
            last = at(page[-1])
            yield page
        if waiting:  # after every record up to ``until``: nothing left to skip
            yield sorted(waiting, key=at)

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

    async def _child_parents(self) -> dict[str, list[tuple[str, Position]]]:
        """Child id -> its configurable parents and their positions, from the parents'
        ``configurable_product_links`` (Magento lists no parent on a child): one pass over
        the configurables, trimmed to ids and links, once per connector (one run)."""
        async with self._parents_lock:
            if self._parents is None:
                parents: dict[str, list[tuple[str, Position]]] = {}
                async for page in walk(self._fetch, "products", id_field="entity_id",
                                       id_key="id", page_size=self.config.page_size,
                                       fields=PARENT_FIELDS,
                                       groups=[[("type_id", "configurable", "eq")]]):
                    for parent in page:
                        links = (parent.get("extension_attributes") or {}).get(
                            "configurable_product_links") or []
                        at = position_of("products", parent)
                        for child in links:
                            parents.setdefault(str(child), []).append((str(parent["id"]), at))
                self._parents = parents
            return self._parents

    async def _stale_parents(self, page: list[RawRecord], after: Position, last: Position,
                             re_read: set[str], limit: asyncio.Semaphore) -> list[RawRecord]:
        """The configurable parents of the page's changed children that this read does not
        otherwise yield (their own position is not after ``after``), fetched with their
        children — one ``entity_id in`` search — so that their variations carry the change.

        Each is re-read once per read and placed at its latest changed child's time (just
        after ``last``, the last position yielded, when that sorts lower), so positions
        keep ascending; ``re_read`` holds the ids already re-read in this read.
        """
        children = [p for p in page if p.get("type_id") in CHILD_TYPES]
        if not children:
            return []
        parents_of = await self._child_parents()
        in_page = {str(p["id"]) for p in page}
        changed: dict[str, datetime] = {}  # parent id -> its latest changed child's time
        for child in children:
            child_at = position_of("products", child).changed_at
            for parent_id, parent_at in parents_of.get(str(child["id"]), ()):
                # a parent after ``after`` is read in this read (or, past ``until``, the next)
                if parent_id in in_page or parent_id in re_read or after < parent_at:
                    continue
                changed[parent_id] = max(changed.get(parent_id, child_at), child_at)
        if not changed:
            return []
        re_read.update(changed)
        body = await self._fetch("products", criteria(
            [[("entity_id", ",".join(sorted(changed, key=id_order)), "in")]],
            page_size=len(changed)))
        # one changed since the map was built is read at its own place
        stale = [p for p in body.get("items") or []
                 if str(p.get("id")) in changed and not after < position_of("products", p)]
        await asyncio.gather(*(self._attach_children(p, limit) for p in stale))
        for parent in stale:
            moment = changed[str(parent["id"])]
            if Position(moment, str(parent["id"])) <= last:
                moment = last.changed_at + timedelta(microseconds=1)
            parent[RE_READ_AT] = moment.isoformat()
        return stale

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
