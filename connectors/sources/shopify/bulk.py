"""Bulk query operations: run one, wait for it, download its JSONL, rebuild the records and
check that nothing is missing before anything is handed on.

- Starting: when Shopify answers that a bulk query of this app is already in progress, the
  running job is looked at: if it runs the very same query (a previous run of ours that
  stopped while waiting), it is adopted; otherwise the connector waits for it to finish
  (up to ``bulk_timeout``) and starts again.
- Waiting: ``node(id:)`` is polled, the interval growing from ``bulk_poll_interval`` to
  ``bulk_poll_max_interval``; past ``bulk_timeout`` the job is cancelled.
- Reading: the file is streamed line by line; a line with ``__parentId`` is a node of a
  nested connection of the object with that id, told apart by the type in its GID; nested
  nodes become ``{"nodes": [...]}`` so records look as the paged queries return them.
- Checking: the lines read must equal ``objectCount`` and the roots ``rootObjectCount``;
  otherwise ``BulkFailed`` — nothing is yielded, so the cursor cannot move past a gap.
- Failing: ``FAILED`` (TIMEOUT, INTERNAL_SERVER_ERROR), ``CANCELED`` and ``EXPIRED`` raise
  ``BulkFailed`` for the caller to retry smaller; partial data (``partialDataUrl``) is never
  used, since it cannot be told complete; ``ACCESS_DENIED`` raises ``SourceAuthError``.
  A completed job with ``url: null`` is an empty result.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from connectors.sources.base import RawRecord, SourceAuthError, SourceError
from connectors.sources.exact import loads as exact_loads
from connectors.sources.shopify import queries
from connectors.sources.shopify.client import ShopifyApiError, ShopifyClient
from connectors.sources.shopify.queries import StreamQuery

log = logging.getLogger("shopsync.sources.shopify")
RUNNING = frozenset({"CREATED", "RUNNING", "CANCELING"})


class BulkFailed(SourceError):
    """A bulk operation ended without a complete result; reading its window again (smaller,
    or page by page) may succeed."""


def gid_type(gid: str) -> str:
    parts = gid.split("?")[0].split("/")
    return parts[3] if len(parts) > 4 else ""


def gid_number(gid: str) -> str:
    return gid.split("?")[0].rsplit("/", 1)[-1]


def rebuild(lines: list[bytes], spec: StreamQuery) -> list[RawRecord]:
    """The root records of a JSONL result with their nested nodes put back in place."""
    by_type = {typename: name for name, (_, typename) in spec.nested.items()}
    roots: list[RawRecord] = []
    objects: dict[str, RawRecord] = {}
    orphans: list[tuple[str, RawRecord]] = []
    for raw in lines:
        obj = exact_loads(raw)
        parent_id = obj.pop("__parentId", None)
        if isinstance(obj.get("id"), str):
            objects[obj["id"]] = obj
        if parent_id is None:
            roots.append(obj)
            for name in spec.nested:
                obj[name] = {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
            continue
        orphans.append((parent_id, obj))
    for parent_id, obj in orphans:
        parent = objects.get(str(parent_id))
        connection = by_type.get(gid_type(str(obj.get("id", ""))))
        if parent is None or connection is None:
            raise BulkFailed(f"bulk result has a line whose parent {parent_id} or type"
                             f" {gid_type(str(obj.get('id', '')))} is unknown")
        parent[connection]["nodes"].append(obj)
    return roots


class BulkReader:
    def __init__(self, client: ShopifyClient) -> None:
        self.client = client
        self.config = client.config

    async def read(self, spec: StreamQuery, search: str | None) -> list[RawRecord]:
        """Every record of ``spec`` matching ``search``, through one bulk operation."""
        text = spec.bulk_query(search)
        operation = await self._start(text)
        operation = await self._wait(operation)
        status = operation["status"]
        if status == "COMPLETED":
            expected = int(operation.get("objectCount") or 0)
            if not operation.get("url"):
                if expected:
                    raise BulkFailed(f"bulk operation {operation['id']} counts {expected}"
                                     " objects but has no file")
                return []
            lines = await self._download(operation["url"])
            if len(lines) != expected:
                raise BulkFailed(f"bulk operation {operation['id']}: read {len(lines)} lines,"
                                 f" objectCount says {expected}: the result is incomplete")
            records = rebuild(lines, spec)
            roots = int(operation.get("rootObjectCount") or len(records))
            if len(records) != roots:
                raise BulkFailed(f"bulk operation {operation['id']}: {len(records)} roots,"
                                 f" rootObjectCount says {roots}")
            return records
        code = operation.get("errorCode")
        if code == "ACCESS_DENIED":
            raise SourceAuthError(f"Shopify denied the bulk operation {operation['id']}"
                                  " (ACCESS_DENIED): the app needs the read scopes of the"
                                  " query, and partner apps the 'Run bulk operations' access")
        if operation.get("partialDataUrl"):
            log.warning("bulk operation %s %s (%s) left partial data (%s objects); not used:"
                        " it cannot be told complete", operation["id"], status, code,
                        operation.get("objectCount"))
        raise BulkFailed(f"bulk operation {operation['id']} ended {status}"
                         + (f" ({code})" if code else ""))

    async def _start(self, text: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.config.bulk_timeout
        while True:
            data = await self.client.execute(queries.RUN_BULK, {"query": text})
            payload = data.get("bulkOperationRunQuery") or {}
            errors = payload.get("userErrors") or []
            if payload.get("bulkOperation") and not errors:
                log.info("bulk operation %s started", payload["bulkOperation"]["id"])
                return payload["bulkOperation"]
            busy = [e for e in errors if e.get("code") == "OPERATION_IN_PROGRESS"
                    or "already in progress" in str(e.get("message"))]
            if not busy:
                raise ShopifyApiError("Shopify refused the bulk query: " + "; ".join(
                    str(e.get("message")) for e in errors), code="BULK_QUERY_INVALID")
            current = (await self.client.execute(queries.CURRENT_BULK)).get("currentBulkOperation")
            if current and current.get("status") in RUNNING and current.get("query") == text:
                log.info("adopting bulk operation %s: it runs this very query", current["id"])
                return current
            if time.monotonic() > deadline:
                raise ShopifyApiError("another bulk query of this app kept running past"
                                      f" bulk_timeout ({self.config.bulk_timeout:.0f}s)",
                                      code="OPERATION_IN_PROGRESS")
            log.info("another bulk operation of this app is running (%s): waiting for it",
                     current.get("id") if current else "?")
            if current and current.get("status") in RUNNING:
                await self._wait(current, cancel=False)
            else:
                await asyncio.sleep(self.config.bulk_poll_interval)

    async def _wait(self, operation: dict[str, Any], *, cancel: bool = True) -> dict[str, Any]:
        interval = self.config.bulk_poll_interval
        deadline = time.monotonic() + self.config.bulk_timeout
        while operation.get("status") in RUNNING or "objectCount" not in operation:
            if time.monotonic() > deadline:
                if cancel:
                    await self.client.execute(queries.CANCEL_BULK, {"id": operation["id"]})
                raise BulkFailed(f"bulk operation {operation['id']} did not finish within"
                                 f" {self.config.bulk_timeout:.0f}s" + (" (cancelled)" if cancel else ""))
            if operation.get("status") in RUNNING:
                await asyncio.sleep(interval)
                interval = min(interval * 1.5, self.config.bulk_poll_max_interval)
            node = (await self.client.execute(queries.POLL_BULK, {"id": operation["id"]})).get("node")
            if node is None:
                raise BulkFailed(f"bulk operation {operation['id']} vanished")
            operation = node
        return operation

    async def _download(self, url: str) -> list[bytes]:
        lines: list[bytes] = []
        try:
            async with self.client.files.stream("GET", url) as response:
                if response.status_code != 200:
                    raise BulkFailed(f"bulk result download answered {response.status_code}")
                pending = b""
                async for chunk in response.aiter_bytes():
                    pending += chunk
                    *complete, pending = pending.split(b"\n")
                    lines.extend(line for line in complete if line.strip())
                if pending.strip():
                    lines.append(pending)
        except httpx.TransportError as exc:
            raise BulkFailed(f"bulk result download failed: {type(exc).__name__}") from None
        return lines
