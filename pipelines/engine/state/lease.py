"""A source's run lease: one run of a source writes its cursors and ledger at a time, whoever
starts it (Dagster, the command line, a backfill, a reconciliation).

A second run of the same source waits up to ``wait`` seconds for the first to end, then is
refused (``SourceBusy``) before it reads or sends anything. The caller picks the bound: a
person at the command line is told at once (0: when the other run ends, this one has
nothing left to do), while a Dagster step waits its turn behind a sibling step of its source
that a parallel executor runs at the same time.

The lease lives where the ledger does, and is held by something the operating system or the
database server takes back when the holder dies, so a crash never leaves a stale lease:

- PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``) on a connection of
  its own, held for the run; the server releases it when that session ends. The lock's key
  is a hash of the schema and the source, so two installations in two schemas of one
  database do not exclude each other. The holder is named in the session's
  ``application_name``, which any role may read in ``pg_stat_activity``.
- SQLite: ``fcntl.flock`` on a file beside the database (``state.db.lease-<source>``),
  which the kernel releases when the process dies. The standard library's ``flock`` rather
  than the ``filelock`` package: it is the same system call, our lock file also carries who
  holds it (which ``filelock`` would leave to us anyway), and the store needs no new
  dependency. The file is left in place when released: removing a lock file races with the
  next run opening it. ``flock`` is not reliable over NFS: keep a shared ledger on
  PostgreSQL. An in-memory database is private to its process: its leases are kept in the
  process.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, text

from connectors.http.retry import RetryPolicy, retrying
from pipelines.engine.state.base import StoreBase, utc_now


class SourceBusy(Exception):
    """Another run of ``source`` holds its lease; this ``kind`` of run did nothing (after
    waiting ``waited`` seconds). ``holder`` says which run, since when and which process,
    when that could be read."""

    def __init__(self, source: str, kind: str, holder: str | None, waited: float = 0) -> None:
        self.source, self.kind, self.holder, self.waited = source, kind, holder, waited
        held = f" ({holder})" if holder else ""
        after = f" in {waited:g} s of waiting" if waited else ""
        self.message = (
            f"source {source} is busy: another run of it holds it{held}, so this {kind} did not"
            f" start{after} and read or sent nothing (two runs of one source at once would"
            " interleave their cursors and ledger writes). Run it again once that run has"
            " ended. A run whose process died lets go at once, so there is nothing to unlock"
            " by hand."
        )
        super().__init__(self.message)


def describe_holder(kind: str, since: datetime) -> str:
    """Who holds a lease, as the refused run is told: what, since when, which process."""
    return (f"a {kind} since {since:%Y-%m-%d %H:%M:%S}Z, pid {os.getpid()}"
            f" on {socket.gethostname()}")


class Leases(StoreBase):
    """``lease(source, kind, wait)``: hold a source for one run."""

    @contextmanager
    def lease(self, source: str, kind: str, wait: float = 0,
              waiting: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold ``source`` for the block. While another run holds it, try again every second
        (sooner at first) for up to ``wait`` seconds, then raise ``SourceBusy``; ``waiting``
        is told once, when the wait begins, whom it waits for.

        Nested leases of the same source in one context (an audit that re-sends through a
        sync) join the outer one.
        """
        held = self._leased.get()
        if source in held:
            yield
            return
        # every second (sooner at first) until ``wait`` is up, under the one retry policy
        patience = RetryPolicy(max_attempts=1_000_000, initial_backoff=0.05, max_backoff=1.0,
                               jitter=0.0, max_total=wait)
        told = False
        with ExitStack() as stack:
            try:
                for attempt in retrying(patience, lambda exc: isinstance(exc, SourceBusy)):
                    with attempt:
                        try:
                            stack.enter_context(self._hold(source, kind))
                        except SourceBusy as busy:
                            if waiting is not None and not told and wait > 0:
                                waiting(f"waiting up to {wait:g} s for source {source}: another"
                                        f" run of it holds it ({busy.holder or 'not known which'})")
                                told = True
                            raise
            except SourceBusy as busy:
                raise SourceBusy(source, kind, busy.holder, wait) from None
            token = self._leased.set(held | {source})
            try:
                yield
            finally:
                self._leased.reset(token)

    def _hold(self, source: str, kind: str) -> AbstractContextManager[None]:
        """The lease, taken now or ``SourceBusy``."""
        holder = describe_holder(kind, utc_now())
        if self.dialect == "postgresql":
            return _advisory_lock(self._engine, source, kind, holder)
        database = self._engine.url.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return _process_lock(id(self._engine), source, kind, holder)
        return _file_lock(Path(database).expanduser(), source, kind, holder)


#: how the application_name of a session holding a lease begins (PostgreSQL keeps 63 bytes)
_APP_PREFIX = "shopsync "


def _key(schema: str, source: str) -> int:
    digest = hashlib.blake2b(f"shopsync lease {schema} {source}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


#: the application_name of the session holding an advisory lock of a bigint key (the key's
#: high and low 32 bits are the lock's classid and objid)
_HOLDER = text("""
    SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.classid = CAST(:high AS oid) AND l.objid = CAST(:low AS oid)
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
""")


@contextmanager
def _advisory_lock(engine: Engine, source: str, kind: str, holder: str) -> Iterator[None]:
    """The lock, on a connection of its own in autocommit (no transaction stays open for
    the run); the connection is closed, not pooled, when the run ends: the session goes, and
    the lock with it."""
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        conn.execute(text("SELECT set_config('application_name', :name, false)"),
                     {"name": (_APP_PREFIX + holder)[:63]})
        key = _key(conn.scalar(text("SELECT coalesce(current_schema(), '')")) or "", source)
        if not conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}):
            unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
            name = conn.scalar(_HOLDER, {"high": unsigned >> 32, "low": unsigned & 0xFFFF_FFFF})
            raise SourceBusy(source, kind, name.removeprefix(_APP_PREFIX) if name else None)
        yield
    finally:
        conn.invalidate()
        conn.close()


def _lock_file(database: Path, source: str) -> Path:
    name = source if re.fullmatch(r"[a-z0-9_]{1,64}", source) else hashlib.blake2b(
        source.encode(), digest_size=8).hexdigest()
    return database.with_name(f"{database.name}.lease-{name}")


@contextmanager
def _file_lock(database: Path, source: str, kind: str, holder: str) -> Iterator[None]:
    import fcntl  # POSIX: the state store's SQLite leases need it

    path = _lock_file(database.absolute(), source)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            named = path.read_text(errors="replace").strip()
            raise SourceBusy(source, kind, named or None) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_IN_PROCESS: dict[tuple[int, str], str] = {}
_IN_PROCESS_LOCK = threading.Lock()


@contextmanager
def _process_lock(engine: int, source: str, kind: str, holder: str) -> Iterator[None]:
    """An in-memory database's lease: only this process can open the database."""
    with _IN_PROCESS_LOCK:
        if (engine, source) in _IN_PROCESS:
            raise SourceBusy(source, kind, _IN_PROCESS[engine, source])
        _IN_PROCESS[engine, source] = holder
    try:
        yield
    finally:
        with _IN_PROCESS_LOCK:
            del _IN_PROCESS[engine, source]
