"""A file's rows in key order, the last row of a key winning, in bounded memory.

A stream's position inside a file is a key, so a file's rows must come out in key order
whatever order the export wrote them in. Held whole in memory, a file of a million orders
costs gigabytes; here at most ``spill_rows`` rows are held: beyond that, rows are sorted in
runs written to temporary files (``pickle``) and the runs merged (``heapq.merge``), an
external merge sort. A file of fewer rows is sorted in memory, as before.

On disk the order is (key's ``id_order``, key): two keys that ``id_order`` ranks equal
("7" and "007") come in text order, where in memory they come in the order they first
appeared. The stream's position cannot tell such keys apart either.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

from connectors.sources.base import RawRecord, id_order

#: rows of one file held in memory at most; above it, runs are sorted on disk
SPILL_ROWS = 50_000

#: a row on disk: its key's order, its key, its place in the file, the record
_Entry = tuple[tuple[int, Any], str, int, RawRecord]


def in_key_order(rows: Iterable[tuple[str, RawRecord]],
                 spill_rows: int = SPILL_ROWS) -> Generator[RawRecord, None, None]:
    """``rows`` (key, record) in the order of their keys, each key once: its last row."""
    by_key: dict[str, tuple[int, RawRecord]] = {}
    with tempfile.TemporaryDirectory(prefix="shopsync-files-") as folder:
        runs: list[Path] = []
        for place, (key, record) in enumerate(rows):
            by_key[key] = (place, record)
            if len(by_key) >= spill_rows:
                runs.append(_spill(Path(folder) / f"run-{len(runs)}", by_key))
                by_key = {}
        if not runs:
            entries = sorted(by_key.items(), key=lambda item: id_order(item[0]))
            yield from (record for _, (_, record) in entries)
            return
        if by_key:
            runs.append(_spill(Path(folder) / f"run-{len(runs)}", by_key))
        yield from _last_of_each_key(heapq.merge(*(_read(run) for run in runs),
                                                 key=lambda entry: entry[:3]))


def _spill(path: Path, by_key: dict[str, tuple[int, RawRecord]]) -> Path:
    entries = sorted((id_order(key), key, place, record)
                     for key, (place, record) in by_key.items())
    with path.open("wb") as handle:
        for entry in entries:
            pickle.dump(entry, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _read(path: Path) -> Iterator[_Entry]:
    with path.open("rb") as handle:
        while True:
            try:
                yield pickle.load(handle)  # noqa: S301 - a run this process wrote just now
            except EOFError:
                return


def _last_of_each_key(entries: Iterable[_Entry]) -> Iterator[RawRecord]:
    """Entries sorted by (order, key, place): of each key's, the last in the file."""
    held: _Entry | None = None
    for entry in entries:
        if held is not None and held[1] != entry[1]:
            yield held[3]
        held = entry
    if held is not None:
        yield held[3]
