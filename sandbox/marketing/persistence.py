"""Where the sandbox keeps its state: in memory (the default) or in a SQLite file.

The store is a set of JSON documents, each in a named collection of a shop. In-memory mode
keeps nothing; file mode writes every change through and commits once per request, so a
restart with the same ``--data`` file finds what was accepted.
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


class SqliteFile:
    """Writes every document change through to one SQLite table."""

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
        self._dirty = False

    def put(self, shop: str, collection: str, key: str, doc: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO docs (shop, collection, key, doc) VALUES (?, ?, ?, ?)",
            (shop, collection, key, orjson.dumps(doc)),
        )
        self._dirty = True

    def delete(self, shop: str, collection: str, key: str) -> None:
        self._db.execute(
            "DELETE FROM docs WHERE shop = ? AND collection = ? AND key = ?",
            (shop, collection, key),
        )
        self._dirty = True

    def commit(self) -> None:
        if self._dirty:
            self._db.commit()
            self._dirty = False

    def load(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        for shop, collection, key, doc in self._db.execute(
            "SELECT shop, collection, key, doc FROM docs ORDER BY rowid"
        ):
            yield shop, collection, key, orjson.loads(doc)

    def close(self) -> None:
        self.commit()
        self._db.close()
