"""The files connector on a generated drop folder, for the acceptance suite: the fake shop's
orders as JSON Lines files (one per year, a broken line in the last), read as
``shopsync demo --platform files`` reads them. Every row of a file shares the file's
arrival, so ties across pages are the rule here."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from connectors.http.retry import RetryPolicy
from connectors.sources.files import FilesConfig, FilesConnector
from sandbox.shops.files.config import STREAMS, TIMEZONE
from sandbox.shops.files.drop import write_drop
from sandbox.shops.sql.data import generate


@dataclass
class Handle:
    root: Path
    stream: str
    page_size: int
    record_ids: list[str]

    def connector(self, *, bad_credentials: bool = False,
                  retry: RetryPolicy | None = None) -> FilesConnector:
        return FilesConnector(FilesConfig(
            path=self.root, timezone=TIMEZONE, page_size=self.page_size,
            streams={self.stream: STREAMS[self.stream]}))

    def ids(self) -> set[str]:
        """Every order's id, and ``orders/<file>:<line>`` for the line that is not JSON."""
        return set(self.record_ids)

    def stop(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class Driver:
    platform = "files"
    stream = "orders"
    not_applicable: ClassVar[dict[str, str]] = {
        "throttling": "a folder has no request budget: no rate limit to meet",
        "server_errors": "a folder answers no HTTP: there is no server to fail",
        "bad_credentials": "a folder has no credentials (the OS decides who reads it)",
        "pacing": "a folder has no request budget to pace to",
        "deletions": "a drop folder delivers changes, not the shop's content: a file taken"
                     " away after it was read deletes nothing, and rows cannot say a record"
                     " is gone (connectors/sources/files/README.md)",
    }

    def start(self, *, size: int = 120, empty: bool = False, rate_limit: float | None = None,
              fault_rate: float = 0.0, page_size: int = 20, seed: int = 1) -> Handle:
        root = Path(tempfile.mkdtemp(prefix="shopsync-acceptance-files-"))
        (root / self.stream).mkdir()
        shop = generate(seed, orders=0 if empty else size, customers=10, products=5)
        drop = write_drop(root, shop, streams=[self.stream])
        return Handle(root, self.stream, page_size, drop.ids.get(self.stream, []))


DRIVER = Driver()
