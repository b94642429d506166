"""Bulk query operations: run, poll, cancel, and the JSONL file they leave.

A job's result is computed when it is created (a snapshot) but the job reports CREATED, then
RUNNING, and COMPLETED only after ``bulk_latency + objects / bulk_objects_per_second``
seconds; a job of ``/__fake__/bulk/occupy`` ends when its test says instead (once its status
has been read so many times). The JSONL has one object per line; a nested connection's
nodes are lines of their own carrying ``__parentId`` after their parent; roots come in no
useful order (newest id first), so a reader must not rely on it. An empty result completes
with ``url: null`` and ``objectCount: "0"``. Failures injected through
``/__fake__/bulk/faults`` apply to the next jobs: ``timeout`` and ``internal`` (FAILED with
part of the data at ``partialDataUrl``), ``access_denied`` (FAILED, no data), ``truncated``
(COMPLETED, but the file lacks lines that ``objectCount`` counts) and ``canceled``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson

from sandbox.shops.shopify.data import BASE
from sandbox.shops.shopify.executor import (
    Context,
    QueryError,
    fields,
    is_connection,
    key,
    node_selection,
    parse_query,
    project_value,
)
from sandbox.shops.shopify.records import iso
from sandbox.shops.shopify.settings import FILES_PREFIX
from sandbox.shops.shopify.store import Store

ACTIVE = ("CREATED", "RUNNING", "CANCELING")
FAULTS = ("timeout", "internal", "access_denied", "truncated", "canceled")
MAX_CONNECTIONS, MAX_DEPTH = 5, 2


@dataclass
class BulkOperation:
    id: int
    query: str
    created_at: int
    started: float
    ready_at: float
    lines: list[bytes]
    roots: int
    base_url: str
    fault: str | None = None
    #: reads of its status left before it completes, whatever the time (None: by the time)
    polls: int | None = None
    status: str = "CREATED"
    error_code: str | None = None
    completed_at: int | None = None
    canceled: bool = False

    @property
    def gid(self) -> str:
        return f"gid://shopify/BulkOperation/{self.id}"

    def refresh(self, now_epoch: int) -> None:
        if self.status not in ACTIVE:
            return
        now = time.monotonic()
        if self.polls is not None:
            self.polls -= 1
        ready = now >= self.ready_at if self.polls is None else self.polls <= 0
        if self.status == "CANCELING":
            self.status, self.completed_at = "CANCELED", now_epoch
        elif ready:
            self.completed_at = now_epoch
            if self.fault in ("timeout", "internal", "access_denied"):
                self.status = "FAILED"
                self.error_code = {"timeout": "TIMEOUT", "internal": "INTERNAL_SERVER_ERROR",
                                   "access_denied": "ACCESS_DENIED"}[self.fault]
            else:
                self.status = "CANCELED" if self.fault == "canceled" else "COMPLETED"
        elif now >= self.started:
            self.status = "RUNNING"

    def file(self, partial: bool = False) -> bytes:
        lines = self.lines
        if partial:
            lines = lines[: len(lines) // (2 if self.fault == "timeout" else 3)]
        elif self.fault == "truncated":
            lines = lines[: max(0, len(lines) - 2)]
        return b"".join(line + b"\n" for line in lines)

    def record(self) -> dict[str, Any]:
        done = self.status == "COMPLETED"
        partial = self.status == "FAILED" and self.fault in ("timeout", "internal") and self.lines
        url = f"{self.base_url}{FILES_PREFIX}/bulk/{self.id}.jsonl?sig=fake{self.id:x}"
        count = len(self.lines) if done or partial else 0
        return {
            "__typename": "BulkOperation", "id": self.gid, "status": self.status,
            "errorCode": self.error_code, "createdAt": iso(self.created_at),
            "completedAt": iso(self.completed_at), "objectCount": str(count),
            "rootObjectCount": str(self.roots if done else 0),
            "fileSize": str(len(self.file())) if done and self.lines else None,
            "url": url if done and self.lines else None,
            "partialDataUrl": url.replace(".jsonl", "-partial.jsonl") if partial else None,
            "query": self.query, "type": "QUERY",
        }


def current(store: Store, kind: str) -> BulkOperation | None:
    """The app's most recent bulk operation (of queries: mutations are not faked)."""
    if kind != "QUERY" or not store.bulk:
        return None
    latest = store.bulk[max(store.bulk)]
    latest.refresh(store.now())
    return latest


def _payload(operation: BulkOperation | None, errors: list[dict[str, Any]]) -> dict[str, Any]:
    return {"__typename": "BulkOperationRunQueryPayload",
            "bulkOperation": None if operation is None else operation.record(),
            "userErrors": [{"__typename": "BulkOperationUserError", **e} for e in errors]}


def _invalid(message: str) -> dict[str, Any]:
    return _payload(None, [{"field": ["query"], "message": message, "code": "INVALID"}])


def _shape(ctx: Context, selection_set: Any) -> tuple[int, int]:
    """(connections, depth of connections) in a selection."""
    count, depth = 0, 0
    for f in fields(ctx, selection_set, None):
        if f.selection_set is None:
            continue
        if is_connection(ctx, f):
            inner = [_shape(ctx, s) for s in node_selection(ctx, f)]
            count += 1 + sum(c for c, _ in inner)
            depth = max(depth, 1 + max((d for _, d in inner), default=0))
        else:
            c, d = _shape(ctx, f.selection_set)
            count, depth = count + c, max(depth, d)
    return count, depth


def _check_shape(ctx: Context, document: Any) -> str | None:
    connections, depth = _shape(ctx, document.definitions[0].selection_set)
    if connections > MAX_CONNECTIONS:
        return f"Bulk queries cannot contain more than {MAX_CONNECTIONS} connections."
    if depth - 1 > MAX_DEPTH:
        return ("Bulk queries cannot contain connections with a nesting depth greater than"
                f" {MAX_DEPTH}.")
    return None


def _flatten(ctx: Context, record: dict[str, Any], selection: Any, parent: str | None,
             out: list[bytes]) -> None:
    line: dict[str, Any] = {}
    nested = []
    for f in fields(ctx, selection, record.get("__typename")):
        if f.name.value == "__typename":
            line[key(f)] = record.get("__typename")
        elif f.selection_set is not None and is_connection(ctx, f):
            nested.append(f)
        elif f.name.value not in record:
            raise QueryError(f"Field '{f.name.value}' doesn't exist on type"
                             f" '{record.get('__typename')}'", "undefinedField", f)
        else:
            line[key(f)] = project_value(ctx, record[f.name.value], f, [])
    if parent is not None:
        line["__parentId"] = parent
    out.append(orjson.dumps(line))
    for f in nested:
        for inner in node_selection(ctx, f):
            for child in record.get(f.name.value) or ():
                _flatten(ctx, child, inner, record["id"], out)


def run_query(ctx: Context, text: str) -> dict[str, Any]:
    from sandbox.shops.shopify.roots import CONNECTIONS, matching_rows

    store = ctx.store
    try:
        document = parse_query(text)
    except QueryError as exc:
        return _invalid(f"Invalid bulk query: {exc}")
    roots = [f for d in document.definitions for f in fields(ctx, getattr(d, "selection_set", None), None)]
    if len(roots) != 1 or roots[0].name.value not in CONNECTIONS or not is_connection(ctx, roots[0]):
        return _invalid("Bulk queries must contain at least one connection.")
    root = roots[0]
    problem = _check_shape(ctx, document)
    if problem:
        return _invalid(problem)
    running = [op for op in store.bulk.values() if (op.refresh(store.now()) or op.status in ACTIVE)]
    if len(running) >= store.settings.bulk_concurrency:
        return _payload(None, [{"field": None, "code": "OPERATION_IN_PROGRESS",
                                "message": "A bulk query operation for this app and shop is"
                                           f" already in progress: {running[-1].gid}."}])
    args = ctx.args(root)
    try:
        rows, _, _ = matching_rows(ctx, root.name.value, args, root, [key(root)])
    except QueryError as exc:
        return _invalid(str(exc))
    resource = CONNECTIONS[root.name.value][0]
    lines: list[bytes] = []
    try:
        for row in sorted(rows, key=lambda r: -r.id):
            for inner in node_selection(ctx, root):
                _flatten(ctx, store.record(resource, row), inner, None, lines)
    except QueryError as exc:
        return _invalid(f"Invalid bulk query: {exc}")
    operation_id = max(store.bulk, default=BASE["bulk"]) + 1
    started = time.monotonic() + store.settings.bulk_latency
    operation = BulkOperation(
        operation_id, text, store.now(), started,
        started + len(lines) / store.settings.bulk_objects_per_second, lines, len(rows),
        ctx.base_url, fault=store.bulk_faults.pop(0) if store.bulk_faults else None)
    store.bulk[operation_id] = operation
    store.stats["bulk_operations"] += 1
    return _payload(operation, [])


def cancel(store: Store, operation_id: Any) -> dict[str, Any]:
    digits = str(operation_id or "").rsplit("/", 1)[-1]
    operation = store.bulk.get(int(digits)) if digits.isdigit() else None
    errors: list[dict[str, Any]] = []
    if operation is None:
        errors.append({"field": ["id"], "message": "Bulk operation does not exist"})
    else:
        operation.refresh(store.now())
        if operation.status in ("CREATED", "RUNNING"):
            operation.status = "CANCELING"
        else:
            errors.append({"field": None, "message": "A bulk operation cannot be canceled"
                                                     f" when it is {operation.status.lower()}"})
    return {"__typename": "BulkOperationCancelPayload",
            "bulkOperation": None if operation is None else operation.record(),
            "userErrors": [{"__typename": "UserError", **e} for e in errors]}
