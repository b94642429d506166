"""The engine's "now": the settle margin, deadlines and recent windows are measured on it, so
a test moves time forward instead of waiting for it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

#: the engine's "now" (aware, UTC)
Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """Every engine clock's default: the wall clock, in UTC."""
    return datetime.now(UTC)
