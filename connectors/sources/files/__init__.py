"""File drops as a source: CSV, JSON Lines and Parquet files, one folder per stream, with
the SQL source's column mapping. See connector.py, memory.py and README.md.

The names below are loaded when first asked for, as in ``connectors.sources.sql``: the
parsing process (``apart.py``) does not need the connector."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connectors.sources.files.config import FilesConfig, FilesStreamSpec
    from connectors.sources.files.connector import FilesConnector

_HOMES = {"FilesConfig": "config", "FilesStreamSpec": "config", "FilesConnector": "connector"}

__all__ = ["FilesConfig", "FilesConnector", "FilesStreamSpec"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
