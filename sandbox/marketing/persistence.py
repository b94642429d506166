"""Where the sandbox keeps its state: in memory (the default) or in a SQLite file.

The store is a set of JSON documents, each in a named collection of a shop. In-memory mode
keeps nothing; file mode writes every change and commits once per request, before its answer
leaves, so a restart with the same ``--data`` file finds what was accepted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson


class Persistence(Protocol):
    def put(self, shop: str, collection: str, key: str, doc: dict[str, Any]) -> None: ...
    def delete(self, shop: str, collection: str, key: str) -> None: ...
    def commit(self) -> None: ...
    def load(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]: ...
    def close(self) -> None: ...


class InMemory:
    """Keeps nothing: state lives and dies with the process."""

    def put(self, shop: str, collection: str, key: str, doc: dict[str, Any]) -> None:
        pass

    def delete(self, shop: str, collection: str, key: str) -> None:
        pass

    def commit(self) -> None:
        pass

    def load(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        return iter(())

    def close(self) -> None:
        pass


#: where a document lives: its shop, its collection and its key
Place = tuple[str, str, str]


class SqliteFile:
    """Keeps every document in one SQLite table. The changes of a request are held until it
    commits (its latest document per place, encoded as it was put, and the places deleted),
    then written with one statement per kind: a batch of 50 items is a dozen statements'
    work instead of some 250. The rows read back in the order of their last puts, as when
    each change was written at once (a row put again is a new row, last)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS docs (shop TEXT NOT NULL, collection TEXT NOT NULL,"
            " key TEXT NOT NULL, doc BLOB NOT NULL, PRIMARY KEY (shop, collection, key))"
        )
        self._db.commit()
        #: documents put since the last commit, in the order of their last puts
        self._puts: dict[Place, bytes] = {}
        #: places deleted since the last commit (and not put again since)
        self._deletes: set[Place] = set()

    def put(self, shop: str, collection: str, key: str, doc: dict[str, Any]) -> None:
        place = (shop, collection, key)
        self._deletes.discard(place)
        self._puts.pop(place, None)  # put again: last, as its row would be
        self._puts[place] = orjson.dumps(doc)

    def delete(self, shop: str, collection: str, key: str) -> None:
        place = (shop, collection, key)
        self._puts.pop(place, None)
        self._deletes.add(place)

    def commit(self) -> None:
        if not (self._puts or self._deletes):
            return
        if self._deletes:
            self._db.executemany(
                "DELETE FROM docs WHERE shop = ? AND collection = ? AND key = ?", self._deletes)
        if self._puts:
            self._db.executemany(
                "INSERT OR REPLACE INTO docs (shop, collection, key, doc) VALUES (?, ?, ?, ?)",
                [(*place, doc) for place, doc in self._puts.items()],
            )
        self._db.commit()
        self._puts, self._deletes = {}, set()

    def load(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        for shop, collection, key, doc in self._db.execute(
            "SELECT shop, collection, key, doc FROM docs ORDER BY rowid"
        ):
            yield shop, collection, key, orjson.loads(doc)

    def close(self) -> None:
        self.commit()
        self._db.close()
