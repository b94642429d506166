"""The bulk-write protocol shared by every batch route: a JSON array up to a maximum, each
item checked on its own, valid ones queued for visibility (or dropped by ``--drop-rate``),
and the bulk envelope accounting for all of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request

from sandbox.marketing.errors import ApiError
from sandbox.marketing.http import json_body, store_of
from sandbox.marketing.store import Doc, Shop

#: checks item ``index`` of a batch: the write op to queue, or the reasons it is rejected
ItemCheck = Callable[[int, Any], tuple[Doc | None, list[str]]]


async def read_batch(request: Request, *, what: str, max_batch: int) -> list[Any]:
    """The request's JSON array of ``what``, refused whole when it is larger than allowed."""
    body = await json_body(request)
    if not isinstance(body, list):
        raise ApiError(400, f"The body must be a JSON array of {what}")
    if len(body) > max_batch:
        raise ApiError(
            400,
            f"A {what} batch holds at most {max_batch} items; got {len(body)}."
            " Split it into smaller requests.",
        )
    return body


def accept_batch(
    request: Request, shop: Shop, stats_name: str, batch: list[Any], check: ItemCheck
) -> dict[str, Any]:
    """Queue the valid items of ``batch``, report the others; answer the bulk envelope."""
    store = store_of(request)
    apply_at = store.visible_at()
    rejected = []
    accepted = dropped = 0
    for index, raw in enumerate(batch):
        op, errors = check(index, raw)
        if op is None:
            rejected.append({"index": index, "item": raw, "errors": errors})
            continue
        accepted += 1
        if store.drops():
            dropped += 1
            continue
        shop.enqueue(op, apply_at)
    count_writes(shop, stats_name, accepted=accepted, rejected=len(rejected), dropped=dropped)
    return bulk_envelope(accepted, rejected)


def bulk_envelope(sent: int, rejected: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    rejected = rejected or []
    return {
        "statusCode": 200,
        "sent_count": sent,
        "rejected_count": len(rejected),
        "rejected_items": rejected,
    }


def count_writes(shop: Shop, name: str, **deltas: int) -> None:
    """Feed ``GET /_sandbox/stats``: what became of the items written to ``name``."""
    stats = shop.collection("_stats")
    current = stats.get(name) or {}
    stats.put(name, {k: current.get(k, 0) + deltas.get(k, 0) for k in {*current, *deltas}})
