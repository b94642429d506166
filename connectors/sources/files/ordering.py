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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Runs:
    """What taking a file's rows apart left on disk, in ``folder``: the ascending run (when
    rows were written to it) and the sorted runs of the rows set aside, with the counts the
    merge asks for. Plain data: a file taken apart in another process (``apart.py``) hands
    it back."""

    folder: str
    ascending: bool
    sorted_runs: tuple[str, ...]
    count: int
    set_aside: int
    spill_rows: int


def in_key_order(rows: Iterable[tuple[str, RawRecord]],
                 spill_rows: int = SPILL_ROWS) -> Generator[RawRecord, None, None]:
    """``rows`` (key, record) in the order of their keys, each key once: its last row."""
    with tempfile.TemporaryDirectory(prefix="shopsync-files-") as folder:
        runs, ascending, aside = taken_apart(rows, Path(folder), spill_rows)
        yield from merged(runs, ascending, aside)


def taken_apart(rows: Iterable[tuple[str, RawRecord]], folder: Path, spill_rows: int, *,
                all_on_disk: bool = False) -> tuple[Runs, list[_Entry], list[_Entry]]:
    """The first half of ``in_key_order``: ``rows`` as the ascending run and sorted runs set
    aside, in ``folder`` beyond ``spill_rows`` rows; and the rows of each held in memory
    still (none when ``all_on_disk``: a process that ends hands back only its files)."""
    ascending: list[_Entry] = []  # each row's key past the one before: in order
    aside: list[_Entry] = []
    ascending_path = folder / "ascending"
    runs: list[str] = []  # the rows set aside, each run sorted
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
            ascending, aside = _spilled(folder, ascending, aside, runs)
    if all_on_disk:  # the rows set aside sorted as they are written
        ascending, aside = _spilled(folder, ascending, aside, runs)
    else:
        aside.sort(key=_sort_key)
    runs_of = Runs(str(folder), ascending_path.exists(), tuple(runs), count, set_aside, spill_rows)
    return runs_of, ascending, aside


def _spilled(folder: Path, ascending: list[_Entry], aside: list[_Entry],
             runs: list[str]) -> tuple[list[_Entry], list[_Entry]]:
    """The rows held written out: the ascending ones after those written before, those set
    aside sorted as a run of their own (named in ``runs``)."""
    if ascending:
        _write(folder / "ascending", ascending, "ab")
    if aside:
        aside.sort(key=_sort_key)
        name = f"run-{len(runs)}"
        _write(folder / name, aside, "wb")
        runs.append(name)
    return [], []


def merged(runs: Runs, ascending: list[_Entry] | None = None,
           aside: list[_Entry] | None = None) -> Generator[RawRecord, None, None]:
    """The second half of ``in_key_order``: the rows ``taken_apart`` left, on disk in
    ``runs`` and in memory (``ascending``; ``aside``, sorted), in key order, each key once."""
    folder = Path(runs.folder)
    held, held_aside = ascending or [], aside or []

    def ascending_rows() -> Iterator[_Entry]:
        if runs.ascending:
            yield from _read(folder / "ascending")
        yield from held

    if not runs.sorted_runs and not held_aside:  # in key order: no key twice, no sort
        yield from (entry[3] for entry in ascending_rows())
        return

    def aside_rows() -> Iterator[_Entry]:
        if not runs.sorted_runs:
            return iter(held_aside)
        return heapq.merge(*(_read(folder / run) for run in runs.sorted_runs), held_aside,
                           key=_sort_key)

    def in_text_order() -> bool:
        """Whether keys ranked equal come in text order: the file has ``spill_rows``
        keys or more (each row of the ascending run has a key of its own; one set aside
        may repeat one)."""
        if runs.count < runs.spill_rows:
            return False
        if runs.count - runs.set_aside >= runs.spill_rows:
            return True
        keys = sum(1 for _ in _merged(ascending_rows(), aside_rows(), lambda: True))
        return keys >= runs.spill_rows

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


def _write(path: Path, entries: list[_Entry], mode: str) -> None:
    with path.open(mode) as handle:
        for start in range(0, len(entries), CHUNK_ROWS):
            pickle.dump(entries[start:start + CHUNK_ROWS], handle,
                        protocol=pickle.HIGHEST_PROTOCOL)


def _read(path: Path) -> Iterator[_Entry]:
    with path.open("rb") as handle:
        while True:
            try:
                yield from pickle.load(handle)  # noqa: S301 - a run this process wrote just now
            except EOFError:
                return
