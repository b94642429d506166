"""Generic tabular sources: a SQL database through SQLAlchemy (this package) and, sharing its
column mapping (``columns.py``), file drops (``connectors.sources.files``). See README.md."""

from connectors.sources.sql.columns import LinesSpec, StreamSpec
from connectors.sources.sql.config import SqlConfig, SqlStreamSpec
from connectors.sources.sql.connector import SqlConnector

__all__ = ["LinesSpec", "SqlConfig", "SqlConnector", "SqlStreamSpec", "StreamSpec"]
