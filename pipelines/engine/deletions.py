"""Deletions at the source, carried to the destination.

Three ways to learn that source records are gone, from the cheapest: a stream read in full
(its records not seen any more are gone), a platform that reports deletions
(``ReportsDeletions``), and a comparison of id sets (``ListsIds``). The items those records
became are bulk-deleted at the destination (an idempotent call) and marked ``deleted`` in the
ledger. Nested items (addresses, variations, images) go with their parent's deletion;
reference data a record only carried along (an order's carrier, which other orders share)
stays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime

from connectors.marketing.client import MarketingClient
from connectors.marketing.resources import SYNC_RESOURCES
from connectors.sources.base import SourceConnector
from pipelines.engine.state import ItemStatus, StateStore

DELETE_BATCH = 100


def stale_records(state: StateStore, source: str, resources: Iterable[str],
                  seen: Collection[str]) -> set[str]:
    """Source records the ledger holds items of that a full read did not see."""
    return {record_id for resource in resources
            for record_id in state.live_records(source, resource) if record_id not in seen}


async def reported_deletions(connector: SourceConnector, stream: str,
                             since: datetime | None) -> set[str] | None:
    """What the platform says is gone (a log, or an id-set comparison); None if it can't."""
    deleted = getattr(connector, "deleted_ids", None)
    if deleted is None:
        return None
    found = await deleted(stream, since=since)  # None: no log for this stream
    return None if found is None else set(found)


async def present_ids(connector: SourceConnector, stream: str) -> set[str] | None:
    ids = getattr(connector, "ids", None)
    if ids is None:
        return None
    return {i async for page in ids(stream) for i in page}


def own_resources(resources: Iterable[str]) -> list[str]:
    """Of a stream's resources (in its mapping's order: reference data first, then the
    stream's own resource, then what nests under it), those a record of the stream *is*: its
    own resource and the nested ones. The reference data before it is only carried along
    (an order names its carrier, which other orders share), so a record's deletion leaves it.
    When a selection leaves the stream's own resource out, the last one left stands for it."""
    ordered = list(resources)
    flat = [i for i, r in enumerate(ordered) if SYNC_RESOURCES[r].parent_field is None]
    return ordered[flat[-1]:] if flat else ordered


def _batches(ids: list[str]) -> Iterator[list[str]]:
    """``ids`` in bulk deletes of ``DELETE_BATCH`` (a product's thousands of images too)."""
    for start in range(0, len(ids), DELETE_BATCH):
        yield ids[start:start + DELETE_BATCH]


async def delete_records(
    *, state: StateStore, client: MarketingClient | None, source: str,
    resources: Iterable[str], record_ids: Collection[str],
) -> Counter[str]:
    """Delete at the destination the items of ``record_ids`` (those of the stream's own
    resources, see ``own_resources``); count them per resource. With no client (a dry run),
    only count."""
    deleted: Counter[str] = Counter()
    if not record_ids:
        return deleted
    for resource in own_resources(resources):
        spec = SYNC_RESOURCES[resource]
        keys_by_record = state.keys_of_records(source, resource, list(record_ids))
        keys = [k for ks in keys_by_record.values() for k in ks]
        if not keys:
            continue
        deleted[resource] = len(keys)
        if client is None:
            continue
        if spec.parent_field is None:
            for batch in _batches(sorted({key.split("|", 1)[0] for key in keys})):
                await client.bulk_delete(resource, batch)
        else:  # nested: deleted under each parent named in the payload sent
            entries = state.ledger(source, resource, keys)
            by_parent: dict[str, set[str]] = {}
            for entry in entries.values():
                # the payload names the parent until the item is visible; after that, the
                # record it came from is its parent's (a product's images, a customer's
                # addresses)
                parent = (entry.payload or {}).get(spec.parent_field) or entry.source_record_id
                if parent is not None:
                    by_parent.setdefault(str(parent), set()).add(entry.key.split("|", 1)[0])
            for parent, ids_ in by_parent.items():
                for batch in _batches(sorted(ids_)):
                    await client.bulk_delete(resource, batch, parent_id=parent)
        state.mark(source, resource, keys, ItemStatus.DELETED)
    return deleted
