"""Generic tabular sources: a SQL database through SQLAlchemy (this package) and, sharing its
column mapping (``columns.py``), file drops (``connectors.sources.files``). See README.md.

The names below are loaded when first asked for: a file drop's parsing process
(``files/apart.py``) needs only ``columns.py`` and ``projection.py``, and importing the
connector would cost it SQLAlchemy and httpx — about half of its start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connectors.sources.sql.columns import LinesSpec, StreamSpec
    from connectors.sources.sql.config import SqlConfig, SqlStreamSpec
    from connectors.sources.sql.connector import SqlConnector

#: each public name, by the module that defines it
_HOMES = {"LinesSpec": "columns", "StreamSpec": "columns", "SqlConfig": "config",
          "SqlStreamSpec": "config", "SqlConnector": "connector"}

__all__ = ["LinesSpec", "SqlConfig", "SqlConnector", "SqlStreamSpec", "StreamSpec"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
