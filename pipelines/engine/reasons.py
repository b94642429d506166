"""An exception as the reason the ledger and the reports give for it."""

from __future__ import annotations


def why(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line for a reason: its type and the start of its message
    (a message may quote a whole value)."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= limit else text[:limit] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
