"""What a file-drop source needs to be told: the drop folder, its time zone, its streams."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from connectors.sources.sql.columns import StreamSpec, zone

Format = Literal["csv", "jsonl", "parquet"]
#: file name endings -> format (compressed CSV and JSON Lines are read too)
SUFFIXES: dict[str, Format] = {
    ".csv": "csv", ".csv.gz": "csv", ".tsv": "csv",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".jsonl.gz": "jsonl", ".ndjson.gz": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
}


#: the size from which a file is parsed apart: a fresh interpreter costs about as much CPU
#: as parsing a few thousand rows, and a file this size holds tens of thousands
PARSE_APART_BYTES = 32 * 2**20


def format_of(name: str) -> Format | None:
    lowered = name.lower()
    for suffix, fmt in sorted(SUFFIXES.items(), key=lambda s: -len(s[0])):
        if lowered.endswith(suffix):
            return fmt
    return None


class FilesStreamSpec(StreamSpec):
    """A stream read from the files of one folder (``folder``, relative to the drop folder;
    default: the stream's name) whose names match ``pattern``."""

    folder: str | None = None
    pattern: str = "*"
    #: the format of every file; default: from each file's name (.csv, .jsonl, .parquet…)
    format: Format | None = None
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    #: the text encoding of CSV and JSON Lines files; a row with bytes that are not valid
    #: in it is quarantined, never read with replacement characters
    encoding: str = "utf-8"

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        try:
            info = codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown encoding {value!r}: use a name like utf-8, latin-1,"
                             " cp1252 or utf-16") from None
        if not getattr(info, "_is_text_encoding", True):
            raise ValueError(f"{value!r} is not a text encoding")
        return value

    @model_validator(mode="after")
    def _json_lines_only(self) -> FilesStreamSpec:
        if self.lines is not None and not self.lines.column:
            raise ValueError("lines: a file stream takes its lines from a `column` of the row"
                             " (a JSON list); child tables are for SQL sources")
        return self


class FilesConfig(BaseModel):
    """The drop folder and its streams. ``state_path`` is where the connector remembers the
    files it has seen (see memory.py); default: ``.shopsync/files-state.json`` inside the
    drop folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    timezone: str = "UTC"
    page_size: int = Field(default=500, ge=1, le=10_000)
    state_path: Path | None = None
    #: files of at least this many bytes are parsed and put in key order by a process of
    #: their own (``apart.py``); 0: every file; None: none
    parse_apart_bytes: int | None = Field(default=PARSE_APART_BYTES, ge=0)
    streams: dict[str, FilesStreamSpec] = Field(default_factory=dict)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        zone(value)
        return value

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    def folder(self, stream: str) -> Path:
        spec = self.streams[stream]
        return (self.path / (spec.folder or stream)).resolve()

    def memory_path(self) -> Path:
        return (self.state_path or self.path / ".shopsync" / "files-state.json").expanduser()
