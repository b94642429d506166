"""What the state store's tests share: a source and a resource, and outcomes to record."""

from __future__ import annotations

from collections.abc import Callable

from pipelines.engine.state import ItemStatus, Outcome, StateStore

S, R = "shop-a", "orders"
OpenStore = Callable[..., StateStore]


def outcome(key: str, status: ItemStatus, content_hash: str = "h1", **kwargs: object) -> Outcome:
    return Outcome(key, content_hash, status, **kwargs)  # type: ignore[arg-type]
