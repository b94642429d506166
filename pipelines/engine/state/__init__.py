"""The sync engine's state store: runs, stream cursors, the item ledger and each item's
events (its story: ``pipelines/engine/trace.py``).

SQLAlchemy 2 Core, the same on SQLite (one machine) and PostgreSQL (beyond it); the store
creates and upgrades its own schema when opened. See ``store.py`` for the semantics.
"""

from __future__ import annotations

from pipelines.engine.state.lease import SourceBusy
from pipelines.engine.state.models import (
    EventKind,
    ItemEvent,
    ItemStatus,
    LedgerEntry,
    Outcome,
    Payload,
    RunRecord,
)
from pipelines.engine.state.schema import MIGRATIONS, Migration, SchemaTooNewError
from pipelines.engine.state.store import StateStore

__all__ = [
    "MIGRATIONS",
    "EventKind",
    "ItemEvent",
    "ItemStatus",
    "LedgerEntry",
    "Migration",
    "Outcome",
    "Payload",
    "RunRecord",
    "SchemaTooNewError",
    "SourceBusy",
    "StateStore",
]
