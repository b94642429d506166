"""Reading ledger entries back from the destination's listings, to see whether what was
sent is there as it was sent.

The listing is read with ``IN`` filters on the item ids, in batches that fit a URL,
projected on the fields the listing echoes; nested items (addresses, variations, images) are
read under their parent. A read that still fails after the client's retries costs only its
batch, and a listing the API does not serve (404) is told apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connectors.marketing.client import MarketingClient
from connectors.marketing.errors import AuthenticationError, MarketingApiError, NotFoundError
from connectors.marketing.query import Operator, Query
from connectors.marketing.readback import echoed_fields, projection, readback_hash
from connectors.marketing.resources import SYNC_RESOURCES, SyncResource
from pipelines.engine.send import ledger_key
from pipelines.engine.state import LedgerEntry

IDS_PER_READ = 100
PAGE = IDS_PER_READ * 10  # ledger entries fetched at once: reads for several slots


def shown_as_sent(resource: str, entry: LedgerEntry, seen: Mapping[str, str]) -> str | None:
    """What the listing showed of ``entry`` if it is what was sent (its read-back hash);
    None when it is missing or different."""
    sent = readback_hash(projection(resource, entry.payload or {}))
    return sent if seen.get(entry.key) == sent else None


def item_id(spec: SyncResource, entry: LedgerEntry) -> str:
    """The id an entry's item has at the destination (the first part of its key once its
    payload is dropped)."""
    value = (entry.payload or {}).get(spec.id_field)
    return str(value) if value is not None else entry.key.split("|", 1)[0]


def parent_id(spec: SyncResource, entry: LedgerEntry) -> str:
    """The parent a nested item is listed under: the one its payload names, else the source
    record it came from (a customer's addresses, a product's variations and images)."""
    assert spec.parent_field is not None
    return str((entry.payload or {}).get(spec.parent_field) or entry.source_record_id)


@dataclass
class ReadBack:
    """What reading a page of entries back found."""

    #: key -> read-back hash of every item the listing showed
    seen: dict[str, str] = field(default_factory=dict)
    #: entries whose batch was read (an entry missing from ``seen`` is not at the destination)
    read: list[LedgerEntry] = field(default_factory=list)
    #: entries whose batch could not be read, and why (one message per failed batch)
    unread: list[LedgerEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: False when the API does not serve the resource's listing (404)
    served: bool = True


class Reader:
    """Reads ledger entries back from the resource listings, ``concurrency`` reads in flight
    (the API answers reads independently; one at a time leaves both sides idle)."""

    def __init__(self, client: MarketingClient, id_data_source: int | None,
                 concurrency: int = 4) -> None:
        self.client = client
        self.id_data_source = id_data_source
        self.concurrency = concurrency

    async def read_back(self, resource: str, entries: Sequence[LedgerEntry]) -> ReadBack:
        """Read ``entries`` back in batches that fit a URL; a batch whose read fails after
        the client's retries is returned unread with its error (a wrong key still raises)."""
        slots = asyncio.Semaphore(self.concurrency)
        batches = [list(entries[start:start + IDS_PER_READ])
                   for start in range(0, len(entries), IDS_PER_READ)]

        async def read(batch: list[LedgerEntry]) -> dict[str, str] | MarketingApiError:
            async with slots:
                try:
                    return await self._read(resource, batch)
                except AuthenticationError:
                    raise
                except MarketingApiError as exc:  # 404 included: told apart below
                    return exc

        found = ReadBack()
        for batch, seen in zip(batches, await asyncio.gather(*(read(b) for b in batches)),
                               strict=True):
            if isinstance(seen, NotFoundError):
                found.served = False
            if isinstance(seen, MarketingApiError):
                found.unread += batch
                found.errors.append(str(seen))
            else:
                found.read += batch
                found.seen.update(seen)
        return found

    async def _read(self, resource: str, entries: list[LedgerEntry]) -> dict[str, str]:
        """Key -> read-back hash of the items of ``entries`` the listing shows."""
        spec = SYNC_RESOURCES[resource]
        fields = echoed_fields(resource)
        ids = sorted({item_id(spec, e) for e in entries})
        query = Query().where(spec.id_field, Operator.IN, *ids).select(*fields)
        if self.id_data_source is not None:
            query = query.where("data_source_id", Operator.EQUALS, self.id_data_source)
        rows: list[dict[str, Any]] = []
        if spec.parent_field is None:
            rows = (await self.client.list_resource(resource, query.page(1000))).data
        else:  # nested items are listed under their parent, one parent at a time
            for parent in sorted({parent_id(spec, e) for e in entries}):
                rows += (await self.client.list_resource(resource, query.page(1000),
                                                         parent_id=parent)).data
        seen = {}
        for row in rows:
            key = ledger_key(tuple(row.get(f) for f in spec.key_fields)
                             if len(spec.key_fields) > 1 else row.get(spec.id_field))
            seen[key] = readback_hash({f: row.get(f) for f in fields})
        return seen

