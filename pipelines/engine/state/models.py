"""What the state store hands out and takes in: plain frozen values, no database types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson


class ItemStatus(StrEnum):
    """Where one target item stands ("every item ends in a known state", design.md)."""

    ACCEPTED = "accepted"  # the API took it; not yet confirmed by read-back
    VISIBLE = "visible"  # read back through the API: done
    REJECTED = "rejected"  # the API refused it, with errors; kept for inspection and replay
    FAILED = "failed"  # transient failure after retries; sent again next run
    QUARANTINED = "quarantined"  # failed local validation, never sent
    DELETED = "deleted"  # removed from the API
    PARKED = "parked"  # set aside by an operator or a policy; not sent until changed


#: a send that did not get the item into the API: each one counts in ``attempts``
UNSUCCESSFUL = frozenset({ItemStatus.REJECTED, ItemStatus.FAILED})
#: the API holds the item's content: ``attempts`` resets to 0
SUCCESSFUL = frozenset({ItemStatus.ACCEPTED, ItemStatus.VISIBLE})
#: statuses whose payload is worthless (the API has it, or it is gone): never stored
NO_PAYLOAD = frozenset({ItemStatus.VISIBLE, ItemStatus.DELETED})
#: an item as an outcome records it: its fields, or its JSON as it was sent
#: (``orjson.Fragment``), kept as that text; read back, a payload is always its fields
Payload = dict[str, Any] | orjson.Fragment


@dataclass(frozen=True)
class LedgerEntry:
    """The ledger's row for one target item of one (source, resource)."""

    key: str  # the item's identity within (source, resource), e.g. "123" or "123|en"
    content_hash: str  # hash of the content of the last recorded outcome
    status: ItemStatus
    attempts: int  # consecutive unsuccessful sends (rejected/failed) since the last success
    source_record_id: str | None
    errors: list[str]  # API errors (rejected), reasons (quarantined), last error (failed)
    payload: dict[str, Any] | None  # the item as last sent or built; None once accepted
    first_seen_at: datetime
    updated_at: datetime
    accepted_at: datetime | None  # last time an outcome was accepted
    visible_at: datetime | None  # first read-back of the accepted content; reset on accept
    accepted_hash: str | None = None  # content hash of what the API was last seen to take
    resends: int = 0  # times reconciliation sent it again because it did not become visible
    changed_at: datetime | None = None  # when its source record last changed, at the source
    #: the last read-back since its latest acceptance that did not show it (None: none yet)
    unseen_at: datetime | None = None


class EventKind(StrEnum):
    """What can happen to an item besides taking one of the ``ItemStatus`` states (an
    event of those kinds is named after the state)."""

    SEEN = "seen"  # a read-back right after the sync showed it: first seen, not yet confirmed
    MISSING = "missing"  # an audit found a visible item gone from the destination
    DIFFERENT = "different"  # … or different there from what was confirmed


@dataclass(frozen=True)
class ItemEvent:
    """One row of an item's story, as the store keeps it: ``kind`` is an ``ItemStatus`` value
    (the item took that state: an outcome of a send, a check, or a mark) or an
    ``EventKind``; ``run_kind`` is the kind of the run it happened in (sync, backfill,
    reconcile, audit), when known."""

    at: datetime
    kind: str
    run_id: int | None
    run_kind: str | None
    content_hash: str | None
    errors: list[str]
    detail: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """What the engine records for one item after a batch."""

    key: str
    content_hash: str
    status: ItemStatus
    source_record_id: str | None = None
    errors: Sequence[str] = ()
    payload: Payload | None = None
    #: when the source record last changed (the stream position's time), for completeness
    changed_at: datetime | None = None

    def with_status(self, status: ItemStatus, errors: Sequence[str]) -> Outcome:
        """This outcome with another status and errors (``dataclasses.replace`` costs three
        times as much, once per item sent)."""
        return Outcome(self.key, self.content_hash, status, self.source_record_id, errors,
                       self.payload, self.changed_at)


@dataclass(frozen=True)
class RunRecord:
    """One run of the engine over a source (and resource): its window, outcome and counts."""

    id: int
    source: str
    resource: str | None
    kind: str
    #: "running" until finish_run; "interrupted" when a later run of the same stream found it
    #: still running (killed), or when it was stopped by Ctrl-C
    status: str
    started_at: datetime
    finished_at: datetime | None = None
    window_start: datetime | None = None
    window_end: datetime | None = None
    counts: dict[str, int | float] = field(default_factory=dict)
    error: str | None = None
