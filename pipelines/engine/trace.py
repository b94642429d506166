"""One item's story, by its id: every step the state store knows for it, in time order.

Read from the source (which record, changed when, in which run) and mapped; held back or
sent; accepted, refused (with the API's errors) or failed; seen at the destination and
confirmed (with its visibility lag); re-sent, parked, deleted; found missing or different by
an audit. It is what an operator asks first about an item, and the row-level log reverse-ETL
tools give their users.

The steps come from the store's events (``StateStore.events``): one per thing that happened,
written with the ledger change. A read that changed nothing leaves no event (that would be a
row per item per run). Items recorded before events were kept, or whose events reconciliation
deleted past ``reconciliation.keep_events_days``, have only their ledger row:
what it knows (first recorded, last accepted, first seen, the state) is told, labelled so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pipelines.engine.lag import describe_lag, seconds_text
from pipelines.engine.state import EventKind, ItemEvent, ItemStatus, LedgerEntry, StateStore

#: how an event reconstructed from the ledger row is labelled
FROM_LEDGER = ("from the ledger row: before events were kept, or older than"
               " reconciliation.keep_events_days")
#: what becomes of a sent or held-back item, by the outcome's status
_VERDICTS = {
    ItemStatus.QUARANTINED.value: "held back, never sent (quarantined)",
    ItemStatus.ACCEPTED.value: "sent: accepted by the API",
    ItemStatus.REJECTED.value: "sent: rejected by the API",
    ItemStatus.FAILED.value: "sent: failed after its retries (sent again next run)",
}


@dataclass(frozen=True)
class Event:
    """One step of an item's story, as a person reads it."""

    at: datetime
    #: an ``ItemStatus`` the item took, an ``EventKind``, or ``"ledger"`` (``from_ledger``)
    kind: str
    summary: str
    run_id: int | None = None
    run_kind: str | None = None  # sync, backfill, reconcile, audit
    errors: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)
    #: reconstructed from the ledger row: the item was recorded before events were kept
    from_ledger: bool = False

    @property
    def run(self) -> str:
        if self.run_id is None:
            return ""
        return f"{self.run_kind or 'run'} #{self.run_id}"

    def as_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "kind": self.kind, "summary": self.summary,
                "run_id": self.run_id, "run_kind": self.run_kind, "errors": list(self.errors),
                "detail": dict(self.detail), "from_ledger": self.from_ledger}


@dataclass(frozen=True)
class Story:
    """An item of (source, resource) and its events, oldest first."""

    source: str
    resource: str
    key: str
    entry: LedgerEntry | None
    events: list[Event]

    def text(self) -> str:
        """The story as lines for a terminal: a heading, then one line per event."""
        now = f"{self.entry.status.value} now" if self.entry else "not in the ledger"
        record = (f" (source record {self.entry.source_record_id})"
                  if self.entry and self.entry.source_record_id else "")
        lines = [f"{self.source}/{self.resource} {self.key}: {now}{record}"]
        lines += [f"  {when(e.at)}  {e.run.ljust(14)} {e.summary}" for e in self.events]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "resource": self.resource, "key": self.key,
                "status": self.entry.status.value if self.entry else None,
                "source_record_id": self.entry.source_record_id if self.entry else None,
                "events": [e.as_dict() for e in self.events]}


def when(at: datetime) -> str:
    """A moment to the millisecond, in UTC: the steps of a sync are that close."""
    return f"{at:%Y-%m-%d %H:%M:%S}.{at.microsecond // 1000:03d} UTC"


def find_items(state: StateStore, source: str, resource: str, item_id: str) -> list[str]:
    """The ledger keys ``item_id`` names: itself when it is an item's key, else every item
    the source record of that id became (a product in two languages is two items)."""
    return state.keys_for(source, resource, item_id)


def item_story(state: StateStore, source: str, resource: str, key: str) -> list[Event]:
    """Every step the store knows for the item ``key`` (a ledger key: see ``find_items``),
    oldest first; empty when it knows nothing of it."""
    entry = state.ledger(source, resource, [key]).get(key)
    events = [_event(e) for e in state.events(source, resource, key)]
    if entry is None:
        return events
    first = events[0].at if events else None
    return sorted(_from_ledger(entry, before=first), key=lambda e: e.at) + events


def stories(state: StateStore, source: str, resource: str, item_id: str) -> list[Story]:
    """The story of each item ``item_id`` names (by key, or by source record id); empty when
    it names none."""
    return [Story(source, resource, key, state.ledger(source, resource, [key]).get(key),
                  item_story(state, source, resource, key))
            for key in find_items(state, source, resource, item_id)]


def _event(event: ItemEvent) -> Event:
    return Event(at=event.at, kind=event.kind, summary=_summary(event), run_id=event.run_id,
                 run_kind=event.run_kind, errors=tuple(event.errors), detail=event.detail)


def _summary(event: ItemEvent) -> str:
    kind, detail = event.kind, event.detail
    errors = f": {'; '.join(event.errors)}" if event.errors else ""
    if kind in _VERDICTS and "changed_at" in detail:  # an outcome of a sync or a re-send
        return f"{_origin(event)}; {_VERDICTS[kind]}" + (
            errors if kind != ItemStatus.ACCEPTED.value else "")
    if kind == EventKind.SEEN.value:
        low, high = detail.get("lag") or (None, None)
        lag = f": visibility lag {seconds_text(low)}–{seconds_text(high)} after acceptance" if (
            high is not None) else ""
        return f"seen at the destination, first time (a read-back right after the sync){lag}"
    if kind == ItemStatus.VISIBLE.value:
        return _confirmed(event)
    if kind == ItemStatus.PARKED.value:
        why = ("still not visible after its re-sends" if event.run_kind == "reconcile"
               else "refused too many times")
        return f"parked for a person ({why}; see `shopsync rejections`){errors}"
    if kind == ItemStatus.DELETED.value:
        return "deleted at the destination: its source record is gone"
    if kind == EventKind.MISSING.value:
        return "audit: missing at the destination (sent again from the source)"
    if kind == EventKind.DIFFERENT.value:
        return ("audit: different at the destination from what was confirmed (sent again from"
                " the source)")
    return f"marked {kind}{errors}"


def _origin(event: ItemEvent) -> str:
    """Where a send (or a holding back) came from: the source, or the ledger's copy."""
    record, changed = event.detail.get("record"), event.detail.get("changed_at")
    if event.run_kind == "reconcile":
        return "re-sent from the ledger's copy (not visible by its deadline)"
    if changed is None:
        return "sent again from the ledger's copy (it had failed or been rejected)"
    again = " again (backfill or repair)" if event.run_kind == "backfill" else ""
    content = f" (content {event.content_hash[:8]})" if event.content_hash else ""
    return (f"read{again} from the source (record {record}, changed there"
            f" {datetime.fromisoformat(changed):%Y-%m-%d %H:%M:%S} UTC), mapped{content}")


def _confirmed(event: ItemEvent) -> str:
    detail = event.detail
    if "lag" not in detail:
        return "confirmed visible"
    low, high = detail["lag"]
    parts = [f"visibility lag {describe_lag(high, round(high - low, 3))}"]
    if detail.get("first_seen"):
        first = datetime.fromisoformat(detail["first_seen"])
        earlier = " (by the sync's read-back)" if first < event.at else ""
        parts.insert(0, f"first seen {when(first)}{earlier}")
    if detail.get("time_to_confirmation") is not None:
        parts.append(f"time to confirmation {seconds_text(detail['time_to_confirmation'])}")
    return "confirmed visible by reconciliation: " + ", ".join(parts)


def _from_ledger(entry: LedgerEntry, before: datetime | None) -> list[Event]:
    """What the ledger row tells of an item recorded before events were kept: the moments it
    holds that come before the first event (all of them when there is none)."""
    errors = f": {'; '.join(entry.errors)}" if entry.errors else ""
    told = [(entry.first_seen_at, "first recorded"),
            (entry.accepted_at, "last accepted by the API"),
            (entry.visible_at, "first seen at the destination after that acceptance"),
            (entry.updated_at, f"last recorded as {entry.status.value}{errors}")]
    return [Event(at, "ledger", f"{what} ({FROM_LEDGER})", errors=tuple(entry.errors)
                  if what.startswith("last recorded") else (), from_ledger=True)
            for at, what in told if at is not None and (before is None or at < before)]
