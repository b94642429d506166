"""A drop folder of CSV, JSON Lines and Parquet files as a source: one folder per stream.

Every stream is incremental on ``(arrival of the file, key of the row)`` (see memory.py
for why the file's arrival, not the row's change time): a read lists the stream's folder,
fixes the arrival of new files, and reads, oldest first, only the files that arrived after
the position it is given — a file's rows are read once, then stay behind the cursor. Within
a file rows go in key order; when a key appears twice in one file the last row wins (a file
of ``parse_apart_bytes`` or more is parsed and put in that order by a process of its own,
``apart.py``, the next such file of a read beside the one being read). The file
the position is in is read again only when rows of it lie past the position: the memory
keeps the last key of each file read to its end, so an unchanged rerun parses nothing.

A row that cannot be read — a line that is not JSON, a CSV row with too many fields, a row
without its key, a file missing a configured column — is not fatal: it is yielded as a
record carrying ``_errors`` and ``_origin`` (``file:line``), for the engine to quarantine.
"""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from connectors.sources.base import (
    Position,
    RawRecord,
    SourceError,
    StreamInfo,
    UnsupportedStream,
)
from connectors.sources.files import apart, ordering
from connectors.sources.files.config import FilesConfig, FilesStreamSpec, format_of
from connectors.sources.files.memory import Arrived, FileMemory
from connectors.sources.files.rows import file_rows
from connectors.sources.sql.columns import ChangeTimes, zone

#: names of files still being written or left by editors: never read
_SKIPPED = (".tmp", ".part", ".partial", ".crdownload", ".swp", "~")


def _wanted(path: Path, spec: FilesStreamSpec) -> bool:
    name = path.name
    if name.startswith(".") or name.lower().endswith(_SKIPPED) or not path.is_file():
        return False
    if not fnmatch.fnmatch(name, spec.pattern):
        return False
    return spec.format is not None or format_of(name) is not None


class FilesConnector:
    """Reads the configured streams of one drop folder; see the module docstring."""

    platform = "files"

    def __init__(self, config: FilesConfig) -> None:
        self.config = config
        self.tz = zone(config.timezone)
        self._changed = ChangeTimes()
        self.memory = FileMemory(config.memory_path())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.config.path)!r}, streams={list(self.config.streams)})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        return None

    def streams(self) -> Mapping[str, StreamInfo]:
        return {name: StreamInfo(name, True, f"files of {self.config.folder(name)}"
                                 f" matching {spec.pattern}")
                for name, spec in self.config.streams.items()}

    def _spec(self, stream: str) -> FilesStreamSpec:
        if stream in self.config.streams:
            return self.config.streams[stream]
        raise UnsupportedStream(f"no stream {stream!r} is configured; configured:"
                                f" {', '.join(self.config.streams) or 'none'}"
                                " (connection.streams)")

    async def check(self) -> None:
        """The drop folder and each stream's folder exist (a folder has no credentials)."""
        await asyncio.to_thread(self._check)

    def _check(self) -> None:
        if not self.config.path.is_dir():
            raise SourceError(f"connection.path: there is no folder {self.config.path}")
        for stream in self.config.streams:
            self._folder(stream)

    def _folder(self, stream: str) -> Path:
        folder = self.config.folder(stream)
        if not folder.is_dir():
            raise SourceError(f"connection.streams.{stream}.folder: there is no folder {folder}")
        return folder

    def position(self, stream: str, record: RawRecord) -> Position:
        self._spec(stream)
        return Position(self._changed(record["_changed_at"]), record["_key"])

    def read(self, stream: str, *, after: Position | None = None,
             until: datetime | None = None) -> AsyncIterator[list[RawRecord]]:
        """Pages of the rows of files that arrived after ``after`` (and, in the file of
        ``after``, of keys after its id), up to files that arrived by ``until``."""
        spec = self._spec(stream)
        if until is not None and until.tzinfo is None:
            until = until.replace(tzinfo=UTC)
        return self._pages(stream, spec, after, until)

    async def _pages(self, stream: str, spec: FilesStreamSpec, after: Position | None,
                     until: datetime | None) -> AsyncIterator[list[RawRecord]]:
        arrived = await asyncio.to_thread(self._arrivals, stream, spec, after)
        page: list[RawRecord] = []
        #: files read to their end: name -> (arrival, last key), for the memory
        ends: dict[str, tuple[datetime, str]] = {}
        files = [file for file in itertools.takewhile(
                     lambda file: until is None or file.arrival <= until, arrived)
                 if after is None or not _behind(file, after)]
        parses = apart.ParsedAhead(stream, spec, self.config.timezone, ordering.SPILL_ROWS)
        try:
            for number, file in enumerate(files):
                following = files[number + 1] if number + 1 < len(files) else None
                # read in a worker thread, a page at a time
                async with self._records(stream, spec, file, parses, following) as records:
                    while taken := await asyncio.to_thread(_take, records,
                                                           self.config.page_size):
                        ends[file.name] = (file.arrival, taken[-1]["_key"])
                        if after is not None and file.arrival == after.changed_at:
                            taken = [r for r in taken if after < self.position(stream, r)]
                        for record in taken:
                            page.append(record)
                            if len(page) >= self.config.page_size:
                                yield page
                                page = []
        finally:
            await parses.aclose()
        if ends:
            await asyncio.to_thread(self.memory.read_to_end, stream, ends)
        if page:
            yield page

    def _arrivals(self, stream: str, spec: FilesStreamSpec,
                  after: Position | None) -> list[Arrived]:
        folder = self._folder(stream)
        files = [(path, path.relative_to(folder).as_posix())
                 for path in sorted(folder.iterdir()) if _wanted(path, spec)]
        return self.memory.arrivals(stream, files, after.changed_at if after else None)

    @asynccontextmanager
    async def _records(self, stream: str, spec: FilesStreamSpec, file: Arrived,
                       parses: apart.ParsedAhead, following: Arrived | None,
                       ) -> AsyncIterator[Generator[RawRecord, None, None]]:
        """The file's rows as records in key order, the last row of a key winning, in
        bounded memory (``ordering.py``): a file of ``parse_apart_bytes`` or more parsed and
        taken apart by a process of its own (``apart.py``), then merged here, while the
        ``following`` file, when it is as large, is parsed by the next."""
        if not self._apart(file):
            records = ordering.in_key_order(file_rows(stream, spec, self.tz, file),
                                            ordering.SPILL_ROWS)
            try:
                yield records
            finally:
                records.close()
            return
        runs, folder = await parses.runs(file)
        with folder:
            if following is not None and self._apart(following):
                parses.start(following)
            merged = ordering.merged(runs)
            try:
                yield merged
            finally:
                merged.close()

    def _apart(self, file: Arrived) -> bool:
        threshold = self.config.parse_apart_bytes
        if threshold is None:
            return False
        try:
            return file.path.stat().st_size >= threshold
        except OSError:  # gone since the folder was listed: read() says so, here
            return False


def _behind(file: Arrived, after: Position) -> bool:
    """Whether nothing of ``file`` lies past ``after``: it arrived before, or it is the
    file of ``after`` and its last row (once a read has reached it) is at or before it."""
    if file.arrival != after.changed_at:
        return file.arrival < after.changed_at
    return file.last_key is not None and Position(file.arrival, file.last_key) <= after


def _take(records: Iterator[RawRecord], count: int) -> list[RawRecord]:
    """The next ``count`` records at most (none: the file is read)."""
    return list(itertools.islice(records, count))
