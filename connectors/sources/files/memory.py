"""The files a drop folder has shown, and when each arrived: what makes a file's rows read
once, through the engine's own cursor.

A row's position is ``(arrival of its file, its key)``. The arrival of a file is fixed the
first time its content is seen and kept in a small JSON file (name, size, mtime, SHA-256,
arrival), so positions never move between runs: the engine's checkpoint after a row is
then "every file that arrived before this one, and this file up to this key", and a later
run parses only files that arrived after it. The rows' own change times cannot play that
part: an export dropped late holds rows older than the cursor, which a change-time order
would have to put behind it.

When a file arrives:

- its arrival is its modification time, but never before any arrival already given
  (plus a microsecond) nor before the reader's lower bound: a file copied in with an old
  mtime (``cp -p``, an unzipped archive) is a new file, not history;
- on the very first scan (nothing remembered yet) arrivals are the modification times as
  they are, so ``history_start`` and backfill windows select the files of those days;
- a file whose content changes is a new arrival (rows are read again, and the engine's
  ledger sends only what differs); one merely touched (same SHA-256) keeps its arrival;
- a file still being written has a recent mtime, so its arrival lies after the engine's
  read horizon (a settled second in the past): it is read once it has stopped changing.

Once a read has gone through a file to its end, the memory also keeps the file's last key
(``last_key``): a position at or past ``(arrival, last key)`` has nothing left in that file,
so the run after a sync that ended in it does not parse and sort it again (a changed file is
a new arrival, without a last key until it is read).

Losing the memory file is safe but not free: files are then placed by their mtime, and
those at or before the engine's cursor count as read.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

try:
    import fcntl
except ImportError:  # not POSIX: concurrent readers of one source are not serialized
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("shopsync.sources.files")
MICROSECOND = timedelta(microseconds=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
VERSION = 1


@dataclass
class Seen:
    size: int
    mtime_ns: int
    sha256: str
    arrival: str  # ISO 8601, UTC, microseconds
    #: the key of its last row in key order, once a read reached its end
    last_key: str | None = None


@dataclass(frozen=True)
class Arrived:
    """A file of a stream with its arrival, ready to be read."""

    path: Path
    name: str  # relative to the stream's folder
    arrival: datetime
    #: the key of its last row, when a read has reached its end (else None)
    last_key: str | None = None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mtime(ns: int) -> datetime:
    return EPOCH + timedelta(microseconds=ns // 1000)


class FileMemory:
    """The JSON memory of every stream of one source."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {"version": VERSION, "streams": {}}
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("the memory of files read at %s is unreadable (%s): starting afresh",
                        self.path, exc)
            return {"version": VERSION, "streams": {}}
        return data if isinstance(data, dict) and data.get("version") == VERSION else {
            "version": VERSION, "streams": {}}

    def _save(self, data: dict[str, Any]) -> None:
        """Atomically: a crash leaves the old memory or the new one, never half of one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".files-state-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One reader at a time updates the memory (streams of one source may be read by
        concurrent runs); the lock is a file beside it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(lock, fcntl.LOCK_UN)

    def arrivals(self, stream: str, files: list[tuple[Path, str]],
                 lower: datetime | None) -> list[Arrived]:
        """The arrival of each of ``files`` (path, name), oldest first; new arrivals are
        given (see the module docstring) and remembered before this returns. A file that
        vanishes meanwhile is left out."""
        with self._locked():
            data = self._load()
            memory = data["streams"].setdefault(stream, {"horizon": None, "files": {}})
            kept = self._assign(stream, memory, self._seen(memory["files"], files), lower)
            if kept != memory["files"] or memory["horizon"] != _horizon(kept, memory):
                memory["horizon"] = _horizon(kept, memory)
                memory["files"] = kept
                self._save(data)
        by_name = {name: path for path, name in files}
        arrived = [Arrived(by_name[name], name, datetime.fromisoformat(entry["arrival"]),
                           entry.get("last_key"))
                   for name, entry in kept.items()]
        return sorted(arrived, key=lambda a: (a.arrival, a.name))

    def read_to_end(self, stream: str, ends: dict[str, tuple[datetime, str]]) -> None:
        """Remember the last key of files read to their end (name -> (arrival, last key)),
        where the file has kept that arrival (its content is the one read)."""
        with self._locked():
            data = self._load()
            files = data["streams"].get(stream, {}).get("files", {})
            changed = False
            for name, (arrival, last_key) in ends.items():
                entry = files.get(name)
                if entry is None or datetime.fromisoformat(entry["arrival"]) != arrival:
                    continue  # changed or gone since: its new content was not read
                if entry.get("last_key") != last_key:
                    entry["last_key"] = last_key
                    changed = True
            if changed:
                self._save(data)

    @staticmethod
    def _seen(known: dict[str, dict[str, Any]],
              files: list[tuple[Path, str]]) -> list[tuple[str, dict[str, Any], bool]]:
        """(name, entry, fresh) per file, by mtime: known entries kept, touched files (same
        SHA-256) kept with their new stat, the others fresh with no arrival yet."""
        found = []
        for path, name in files:
            try:
                stat = path.stat()
                entry = known.get(name)
                if entry and (entry["size"], entry["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns):
                    found.append((name, entry, False))
                    continue
                digest = sha256_of(path)
            except FileNotFoundError:
                continue
            if entry and entry["sha256"] == digest:  # touched, not changed
                found.append((name, {**entry, "size": stat.st_size,
                                     "mtime_ns": stat.st_mtime_ns}, False))
            else:
                found.append((name, asdict(Seen(stat.st_size, stat.st_mtime_ns, digest, "")), True))
        return sorted(found, key=lambda f: (f[1]["mtime_ns"], f[0]))

    @staticmethod
    def _assign(stream: str, memory: dict[str, Any], seen: list[tuple[str, dict[str, Any], bool]],
                lower: datetime | None) -> dict[str, dict[str, Any]]:
        horizon = datetime.fromisoformat(memory["horizon"]) if memory["horizon"] else None
        first_scan = horizon is None
        taken = {entry["arrival"] for _, entry, fresh in seen if not fresh}
        kept = {}
        for name, entry, fresh in seen:
            if fresh:
                arrival = _mtime(entry["mtime_ns"])
                if not first_scan:
                    floors = [b + MICROSECOND for b in (horizon, lower) if b is not None]
                    arrival = max([arrival, *floors])
                while arrival.isoformat() in taken:
                    arrival += MICROSECOND
                taken.add(arrival.isoformat())
                entry["arrival"] = arrival.isoformat()
                horizon = arrival if horizon is None else max(horizon, arrival)
                log.info("%s: %s arrived (%s)", stream, name, entry["arrival"])
            kept[name] = entry
        return kept


def _horizon(kept: dict[str, dict[str, Any]], memory: dict[str, Any]) -> str | None:
    """The latest arrival ever given: kept when its file is gone, so later files come after."""
    moments = [datetime.fromisoformat(e["arrival"]) for e in kept.values()]
    if memory["horizon"]:
        moments.append(datetime.fromisoformat(memory["horizon"]))
    return max(moments).isoformat() if moments else None
