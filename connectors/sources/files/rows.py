"""A file's rows as records, in the file's order: each row projected as the stream's
configuration says, or — when it cannot be read — a record carrying its reasons
(``_errors``) and its origin (``stream/file:line``), keyed by that origin."""

from __future__ import annotations

from collections.abc import Iterator
from zoneinfo import ZoneInfo

from connectors.sources.base import RawRecord, SourceError
from connectors.sources.files.config import FilesStreamSpec
from connectors.sources.files.formats import columns_of, read
from connectors.sources.files.memory import Arrived
from connectors.sources.sql.columns import iso, key_text, lookup
from connectors.sources.sql.projection import Projection


def file_rows(stream: str, spec: FilesStreamSpec, tz: ZoneInfo,
              file: Arrived) -> Iterator[tuple[str, RawRecord]]:
    """The file's rows as (key, record), in the file's order."""
    changed = iso(file.arrival)
    project = Projection(spec, tz, f"connection.streams.{stream}.")
    columns = columns_of(file.path, spec)
    absent = []
    if columns is not None:
        wanted = [spec.key, *spec.columns.values()]
        wanted += [spec.lines.column] if spec.lines and spec.lines.column else []
        absent = [c for c in dict.fromkeys(wanted) if not lookup(dict.fromkeys(columns), c)[0]]
    for line in read(file.path, spec):
        origin = f"{stream}/{file.name}:{line.number}"
        errors = [f"{origin}: {line.error}"] if line.error else []
        record: RawRecord = {}
        key = None
        if line.data is not None:
            try:
                record = project(line.data)
                key = key_text(lookup(line.data, spec.key)[1])
            except SourceError:
                raise  # the configuration's mistake, not the row's
            except Exception as exc:  # noqa: BLE001 - one row's value is that row's problem
                record, key = {}, None
                errors.append(f"{origin}: the row cannot be read: {type(exc).__name__}:"
                              f" {str(exc)[:200]}")
            if key is None and not errors:
                errors.append(f"{origin}: no key (column {spec.key!r} is empty or missing)")
        if absent:
            errors.append(f"{origin}: the file has no column {', '.join(map(repr, absent))}")
        record["_changed_at"] = changed
        record["_origin"] = origin
        if errors or key is None:
            record["_errors"] = errors
            key = origin
        record["_key"] = key
        yield key, record
