"""File drops as a source: CSV, JSON Lines and Parquet files, one folder per stream, with
the SQL source's column mapping. See connector.py, memory.py and README.md."""

from connectors.sources.files.config import FilesConfig, FilesStreamSpec
from connectors.sources.files.connector import FilesConnector

__all__ = ["FilesConfig", "FilesConnector", "FilesStreamSpec"]
