"""A file's rows in key order, the last row of a key winning, in bounded memory.

A stream's position inside a file is a key, so a file's rows must come out in key order
whatever order the export wrote them in. Held whole in memory, a file of a million orders
costs gigabytes; here at most ``spill_rows`` rows are held: beyond that they are written to
temporary files (``pickle``, a chunk of rows at a time) and read back merged, an external
merge sort.

Most exports are written in key order already, so rows are taken apart as they come: each
row whose key is past the last such row's goes on one ascending run, which needs no sort
(a file all in order is read back as written); the others (a row that cannot be read, whose
key is its origin; a key out of order or repeated) go aside, are sorted, and are merged in.

The order is the key's ``id_order``. Two rows of one ``id_order`` — a key repeated, or
keys it ranks equal ("7" and "007") — make one key of each, its last row; keys ranked
equal come in the order they first appeared when the file has fewer than ``spill_rows``
keys, in text order otherwise, as the stream's position cannot tell them apart either.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

from connectors.sources.base import RawRecord, id_order

#: rows of one file held in memory at most; above it, runs are sorted on disk
SPILL_ROWS = 50_000
#: rows per pickle on disk: a ``pickle.dump`` per row costs more than the rows' bytes
CHUNK_ROWS = 256

#: a row: its key's order, its key, its place in the file, the record
_Entry = tuple[tuple[int, Any], str, int, RawRecord]


def _sort_key(entry: _Entry) -> tuple[tuple[int, Any], str, int]:
    return entry[0], entry[1], entry[2]


def in_key_order(rows: Iterable[tuple[str, RawRecord]],
                 spill_rows: int = SPILL_ROWS) -> Generator[RawRecord, None, None]:
    """``rows`` (key, record) in the order of their keys, each key once: its last row."""
    with tempfile.TemporaryDirectory(prefix="shopsync-files-") as folder:
        ascending: list[_Entry] = []  # each row's key past the one before: in order
        aside: list[_Entry] = []
        ascending_path = Path(folder) / "ascending"
        runs: list[Path] = []  # the rows set aside, each run sorted
        last: tuple[int, Any] | None = None
        count = set_aside = 0
        for place, (key, record) in enumerate(rows):
            order = id_order(key)
            if last is None or last < order:
                ascending.append((order, key, place, record))
                last = order
            else:
                aside.append((order, key, place, record))
                set_aside += 1
            count = place + 1
            if len(ascending) + len(aside) >= spill_rows:
                _write(ascending_path, ascending, "ab")
                ascending = []
                if aside:
                    aside.sort(key=_sort_key)
                    runs.append(_write(Path(folder) / f"run-{len(runs)}", aside, "wb"))
                    aside = []

        def ascending_rows() -> Iterator[_Entry]:
            if ascending_path.exists():
                yield from _read(ascending_path)
            yield from ascending

        if not runs and not aside:  # the file was in key order: no key twice, no sort
            yield from (entry[3] for entry in ascending_rows())
            return
        aside.sort(key=_sort_key)

        def aside_rows() -> Iterator[_Entry]:
            if not runs:
                return iter(aside)
            return heapq.merge(*(_read(run) for run in runs), aside, key=_sort_key)

        def in_text_order() -> bool:
            """Whether keys ranked equal come in text order: the file has ``spill_rows``
            keys or more (each row of the ascending run has a key of its own; one set aside
            may repeat one)."""
            if count < spill_rows:
                return False
            if count - set_aside >= spill_rows:
                return True
            keys = sum(1 for _ in _merged(ascending_rows(), aside_rows(), lambda: True))
            return keys >= spill_rows

        yield from _merged(ascending_rows(), aside_rows(), in_text_order)


def _merged(ascending: Iterator[_Entry], aside: Iterator[_Entry],
            in_text_order: Callable[[], bool]) -> Iterator[RawRecord]:
    """The ascending run with the rows set aside (sorted) merged in: of each key, the last
    row; keys of one order in text order or in the order they first appeared (asked once,
    and only when keys ranked equal are there). A row of the run with no row set aside
    beside it, nearly every one, goes at once."""
    decided: list[bool] = []

    def one_of_each(group: list[_Entry]) -> Iterator[RawRecord]:
        if len(group) == 1:
            return iter((group[0][3],))
        group.sort(key=_sort_key)
        if group[0][1] != group[-1][1] and not decided:
            decided.append(in_text_order())
        return _one_of_each(group, bool(decided and decided[0]))

    following = next(aside, None)
    for entry in ascending:
        order = entry[0]
        while following is not None and following[0] < order:
            group, following = _gather(following, aside)
            yield from one_of_each(group)
        if following is not None and following[0] == order:
            group, following = _gather(following, aside)
            yield from one_of_each([*group, entry])
        else:
            yield entry[3]
    while following is not None:
        group, following = _gather(following, aside)
        yield from one_of_each(group)


def _gather(first: _Entry, rest: Iterator[_Entry]) -> tuple[list[_Entry], _Entry | None]:
    """``first`` and the rows after it of its order; and the row after those."""
    group = [first]
    for entry in rest:
        if entry[0] != first[0]:
            return group, entry
        group.append(entry)
    return group, None


def _one_of_each(group: list[_Entry], text_order: bool) -> Iterator[RawRecord]:
    """The rows of one order sorted by (key, place): the last of each key."""
    last: dict[str, _Entry] = {}
    first: dict[str, int] = {}
    for entry in group:
        last[entry[1]] = entry
        first.setdefault(entry[1], entry[2])
    keys = sorted(last) if text_order else sorted(last, key=first.__getitem__)
    return (last[key][3] for key in keys)


def _write(path: Path, entries: list[_Entry], mode: str) -> Path:
    with path.open(mode) as handle:
        for start in range(0, len(entries), CHUNK_ROWS):
            pickle.dump(entries[start:start + CHUNK_ROWS], handle,
                        protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _read(path: Path) -> Iterator[_Entry]:
    with path.open("rb") as handle:
        while True:
            try:
                yield from pickle.load(handle)  # noqa: S301 - a run this process wrote just now
            except EOFError:
                return
