"""Reading one dropped file as rows, each with its line (or row) number, or the reason it
could not be read.

CSV and JSON Lines are read with the standard library rather than pandas: a malformed row
must be reported with its line and the rest of the file read, which pandas' C parser
cannot do (its ``on_bad_lines`` callback gets the fields, not the line). CSV cells are kept
as text, so ``"00123"`` stays ``"00123"``; the mapping converts what a field wants.
Parquet is read with pyarrow, one record batch at a time, as Python values (int, Decimal,
datetime, lists of dicts) — no NaN standing for null.

Values stay exact, and a row that cannot be taken as it is is that row's problem alone:
text is decoded in the stream's ``encoding`` and a row holding bytes that are not valid in
it is reported, never read with ``\ufffd`` in their place (see ``exact.py``); JSON integers
past 64 bits stay integers; a CSV cell past the csv module's field limit costs its row, and
the reader goes on with the next line.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from connectors.sources.exact import describe_undecodable, loads, undecodable
from connectors.sources.files.config import FilesStreamSpec, Format, format_of


class Line(NamedTuple):
    """One row of a file: its data, or why it could not be read (a tuple: made per row,
    it costs a fifth of a frozen dataclass)."""

    number: int
    data: dict[str, Any] | None
    error: str | None = None


def _text(path: Path, encoding: str, newline: str = "") -> IO[str]:
    """The file as text; bytes the encoding cannot decode are kept as lone surrogates, for
    the reader to report with their row."""
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=encoding,
                                errors="surrogateescape", newline=newline)
    return open(path, encoding=encoding, errors="surrogateescape", newline=newline)


def _undecodable(fields: list[str], header: list[str], encoding: str) -> str | None:
    """Why a row of ``fields`` cannot be read as text, naming the column (None: it can)."""
    if undecodable("".join(fields)) is None:
        return None
    for index, value in enumerate(fields):
        found = undecodable(value)
        if found is not None:
            where = f" in column {header[index]!r}" if index < len(header) else ""
            return f"{describe_undecodable(found, encoding)}{where}"
    return None


def _too_long(exc: csv.Error) -> bool:
    return "field larger than field limit" in str(exc)


def read_csv(path: Path, spec: FilesStreamSpec) -> Iterator[Line]:
    delimiter = "\t" if path.name.lower().endswith(".tsv") and spec.delimiter == "," else spec.delimiter
    with _text(path, spec.encoding) as handle:
        reader = csv.reader(handle, delimiter=delimiter, strict=True)
        try:
            header = [name.strip().lstrip("\ufeff") for name in next(reader)]
        except StopIteration:
            return
        except csv.Error as exc:
            yield Line(1, None, f"the header is not CSV: {exc}")
            return
        if (why := _undecodable(header, [], spec.encoding)) is not None:
            yield Line(1, None, f"the header holds {why}: set the stream's `encoding`")
            return
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                if _too_long(exc):  # the reader drops the rest of the line and goes on
                    yield Line(start, None, f"a cell longer than {csv.field_size_limit():,}"
                                            " characters (the CSV field limit)")
                    continue
                # an unterminated quote: the rest of the file is lost
                yield Line(start, None, f"not CSV from here on: {exc}")
                return
            if not fields or fields == [""]:
                continue
            if len(fields) != len(header):
                yield Line(start, None, f"{len(fields)} fields where the header has"
                                        f" {len(header)}")
                continue
            if (why := _undecodable(fields, header, spec.encoding)) is not None:
                yield Line(start, None, why)
                continue
            yield Line(start, dict(zip(header, fields, strict=True)))


def read_jsonl(path: Path, spec: FilesStreamSpec) -> Iterator[Line]:
    with _text(path, spec.encoding, newline="\n") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            if (found := undecodable(raw)) is not None:
                yield Line(number, None, describe_undecodable(found, spec.encoding))
                continue
            try:
                data = loads(raw)
            except orjson.JSONDecodeError as exc:
                yield Line(number, None, f"not JSON: {exc}")
                continue
            if not isinstance(data, dict):
                yield Line(number, None, f"a JSON {type(data).__name__}, not an object")
                continue
            yield Line(number, data)


def read_parquet(path: Path, spec: FilesStreamSpec) -> Iterator[Line]:
    import pyarrow.parquet as pq

    number = 0
    with pq.ParquetFile(path) as parquet:
        for batch in parquet.iter_batches(batch_size=10_000):
            for data in batch.to_pylist():
                number += 1
                yield Line(number, data)


def parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.read_schema(path).names)


READERS = {"csv": read_csv, "jsonl": read_jsonl, "parquet": read_parquet}


def read(path: Path, spec: FilesStreamSpec) -> Iterator[Line]:
    """The rows of ``path``; a file that cannot be read at all is one Line with the reason."""
    fmt: Format | None = spec.format or format_of(path.name)
    if fmt is None:
        yield Line(0, None, "unknown format: name it .csv, .jsonl or .parquet, or set the"
                            " stream's `format`")
        return
    try:
        yield from READERS[fmt](path, spec)
    except FileNotFoundError:  # removed since the folder was listed: nothing to read
        return
    except (OSError, ValueError, EOFError) as exc:  # pyarrow's errors are OSError/ValueError
        yield Line(0, None, f"the file cannot be read as {fmt}: {exc}")


def columns_of(path: Path, spec: FilesStreamSpec) -> list[str] | None:
    """The columns a CSV or Parquet file declares (None for JSON Lines, whose rows may omit
    keys, or when they cannot be read: read() then says why)."""
    fmt = spec.format or format_of(path.name)
    try:
        if fmt == "parquet":
            return parquet_columns(path)
        if fmt == "csv":
            delimiter = "\t" if path.name.lower().endswith(".tsv") and spec.delimiter == "," \
                else spec.delimiter
            with _text(path, spec.encoding) as handle:
                header = next(csv.reader(handle, delimiter=delimiter), [])
            return [name.strip().lstrip("\ufeff") for name in header]
    except (OSError, ValueError, EOFError, csv.Error):
        return None
    return None
