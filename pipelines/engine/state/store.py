"""The state store: runs, stream cursors, the item ledger and each item's events, in SQLite
or PostgreSQL.

One ``StateStore`` per process is enough; it is safe to use from several threads, and
several processes may open the same database. Every write method is one transaction,
durable when it returns; ``transaction()`` groups several into one.

On SQLite the database runs in WAL mode with ``synchronous=NORMAL``: a committed write
survives a crash of the process, but a power loss may take the last few commits back. The
engine writes outcomes and the cursor that follows them in one transaction
(``record(..., cursor=…)``), so such a loss only rewinds both together, and the items are
sent again — harmless, as writes to the API are idempotent.

Every change to an item also appends an event to its story (``events``), in the same
transaction: what the outcome was, or what it was marked, and in which run. The run is the
innermost one begun in the caller's context (``start_run`` … ``finish_run``, per thread or
asyncio task), so the engine names it once, when it starts the run.
"""

from __future__ import annotations

from pipelines.engine.state.budgets import RequestBudgets
from pipelines.engine.state.lease import Leases
from pipelines.engine.state.queries import LedgerQueries
from pipelines.engine.state.readbacks import Readbacks
from pipelines.engine.state.runs import Runs
from pipelines.engine.state.writes import LedgerWrites


class StateStore(LedgerWrites, LedgerQueries, Readbacks, Runs, RequestBudgets, Leases):
    """Runs, cursors and the ledger of one shopsync installation, in one database.

    ``url`` is a SQLAlchemy URL: ``sqlite:///path/state.db`` (the parent folder is
    created) or ``postgresql+psycopg://user:password@host/db``. Opening creates the schema,
    or upgrades it, before anything else happens.

    Each concern is a mixin in a module of its own, over ``StoreBase`` (``base.py``: the
    database, the open transaction, the runs begun in this context): ``runs.py`` (runs and
    cursors), ``writes.py`` (what changes the ledger), ``queries.py`` (what it is asked),
    ``events.py`` (each item's story), ``readbacks.py`` (what audits saw), ``budgets.py``
    (request budgets shared by every process), ``lease.py`` (one run of a source at a
    time). Mixins rather than parts the store delegates to: the engine calls one flat object
    (``store.record(…)``, ``store.counts(…)``), and every concern shares the one connection
    of a ``transaction()`` and the run an event names, so parts would need the base anyway
    and the store would repeat each signature to forward it.
    """
