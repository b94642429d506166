"""What every part of the state store stands on: the database, opened (its schema created
or upgraded first), one connection per transaction, and the runs begun in the caller's
context, which the events of the writes name."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from sqlalchemy import Connection
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from pipelines.engine.state.schema import MIGRATIONS, Migration, migrate
from pipelines.engine.state.schema import current_version as _current_version
from pipelines.engine.state.sql import SQLITE_BEGIN, ledger_upsert, open_engine

#: keys per ``IN (…)`` list: far below SQLite's 32 766 and PostgreSQL's 65 535 parameters
IN_CHUNK = 500


def utc_now() -> datetime:
    return datetime.now(UTC)


def in_chunks(items: Iterable[str], size: int = IN_CHUNK) -> Iterator[Sequence[str]]:
    """``items``, each once (in first-seen order), in lists of at most ``size``: one
    ``IN (…)`` list each."""
    unique = list(dict.fromkeys(items))
    for start in range(0, len(unique), size):
        yield unique[start : start + size]


#: a run begun in this context and not finished yet: (id, source, resource, kind)
_OpenRun = tuple[int, str, str | None, str]


class StoreBase:
    """The database of one ``StateStore`` and the context its calls share: the open
    ``transaction()`` and the runs begun and not finished. Its ``url``: see ``StateStore``.
    """

    def __init__(self, url: str, *, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.dialect = make_url(url).get_backend_name()
        self._engine = open_engine(url)
        self._upsert = ledger_upsert(self.dialect)
        self._written, self._analyze_at = 0, 1_000  # see _maybe_analyze
        self._current: ContextVar[Connection | None] = ContextVar(
            f"shopsync_state_{id(self)}", default=None
        )
        #: the runs begun in this context and not finished, innermost last: events name them
        self._runs: ContextVar[tuple[_OpenRun, ...]] = ContextVar(
            f"shopsync_runs_{id(self)}", default=()
        )
        #: the sources whose run lease this context holds (``lease.py``)
        self._leased: ContextVar[frozenset[str]] = ContextVar(
            f"shopsync_leased_{id(self)}", default=frozenset()
        )
        try:
            with self._connection(write=True) as conn:
                migrate(conn, migrations)
        except BaseException:
            self._engine.dispose()
            raise

    @property
    def url(self) -> str:
        """The database's URL, password included (for another process of this run)."""
        return self._engine.url.render_as_string(hide_password=False)

    @property
    def parallel_safe(self) -> bool:
        """Whether a call may run in another thread beside this context's calls: not when
        they share one connection — an in-memory SQLite database's, or the open
        ``transaction()``'s — where they would interleave in one transaction."""
        return self._current.get() is None and not isinstance(self._engine.pool, StaticPool)

    @classmethod
    def default_url(cls) -> str:
        """``$SHOPSYNC_HOME/state.db``, ``SHOPSYNC_HOME`` defaulting to ``~/.shopsync``."""
        home = Path(os.environ.get("SHOPSYNC_HOME") or "~/.shopsync").expanduser().absolute()
        return f"sqlite:///{home / 'state.db'}"

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        with self._connection() as conn:
            return _current_version(conn)

    # -- transactions

    @contextmanager
    def _connection(self, *, write: bool = False) -> Iterator[Connection]:
        """The connection of the open ``transaction()``, or a new one-transaction one."""
        current = self._current.get()
        if current is not None:
            yield current
            return
        with self._engine.connect() as conn:
            if write and self.dialect == "sqlite":
                conn.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
            with conn.begin():
                yield conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Make every store call inside the block one transaction: all or nothing.

        Nested blocks join the outer one. The block holds a connection (and on SQLite the
        write lock) until it ends: keep network calls out of it.
        """
        if self._current.get() is not None:
            yield
            return
        with self._connection(write=True) as conn:
            token = self._current.set(conn)
            try:
                yield
            finally:
                self._current.reset(token)

    # -- the run an event happens in

    def _run_for(self, source: str, resource: str | None = None,
                 kind: str | None = None) -> int | None:
        """The innermost unfinished run of ``source`` begun in this context (of ``resource``
        and ``kind`` when given): the run an event happens in."""
        for run_id, run_source, run_resource, run_kind in reversed(self._runs.get()):
            if run_source == source and (resource is None or run_resource == resource) and (
                kind is None or run_kind == kind
            ):
                return run_id
        return None
