"""Time as every fake shop has it: the window of generated history, when each generated
record was created and last changed (drawn from the seed, so a seed gives the same shop on
every machine), and the shop's clock, which tests may freeze and move.

What differs by platform stays with the platform: its extra bulk edits, how its records'
change times are spread (Magento's, for one), and how it writes and parses times.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

START = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
END = START + 540 * 86400  # 2025-06-24: the generated history ends here
#: the seconds at which a bulk edit (an import, a mass action) touched many records at once
#: (ties bigger than a page), and the share of the records created before it that it touched
BULK_EDITS: Mapping[str, tuple[int, float]] = {
    "orders": (END - 7 * 86400 + 9 * 3600 + 17, 0.15),
    "products": (END - 30 * 86400 + 14 * 3600, 0.40),
    "customers": (END - 60 * 86400 + 3 * 3600 + 1, 0.20),
}
NO_BULK_EDIT = (0, 0.0)


def changed_later(rng: random.Random, created: int) -> int:
    """When a record created at ``created`` last changed: a third within minutes, most
    within days, some months later; never after ``END``."""
    r = rng.random()
    delay = (rng.randrange(0, 600) if r < 0.35 else rng.randrange(600, 5 * 86400)
             if r < 0.75 else rng.randrange(5 * 86400, 120 * 86400))
    return created + delay if created + delay < END else created + (END - created) // 2


def change_times(rng: random.Random, n: int, bulk: tuple[int, float] = NO_BULK_EDIT, *,
                 start: int = START,
                 changed: Callable[[random.Random, int], int] = changed_later,
                 ) -> list[tuple[int, int]]:
    """``n`` (created, last changed) pairs, created ascending between ``start`` and ``END``;
    a share of them last changed by the ``bulk`` edit, in its one second."""
    created = sorted(rng.randrange(start, END) for _ in range(n))
    bulk_at, share = bulk
    pairs = []
    for at in created:
        last = changed(rng, at)
        if share and at < bulk_at and last < bulk_at and rng.random() < share:
            last = bulk_at
        pairs.append((at, last))
    return pairs


def epoch_of(text: str, naive: tzinfo = UTC) -> int:
    """An ISO 8601 time or date (a space may stand for the ``T``) in epoch seconds, one
    without an offset read in ``naive``; ValueError when it is none."""
    moment = datetime.fromisoformat(text.strip().replace(" ", "T"))
    return int((moment if moment.tzinfo else moment.replace(tzinfo=naive)).timestamp())


class Clock:
    """A fake shop's "now": the wall clock, unless a test froze it through
    ``/__fake__/clock``. A store that shows wall-clock times sets ``tz``."""

    frozen_now: int | None = None
    tz: ZoneInfo

    def now(self) -> int:
        return self.frozen_now if self.frozen_now is not None else int(time.time())

    def move(self, asked: Mapping[str, Any], parse: Callable[[Any], int]) -> None:
        """What ``POST /__fake__/clock`` asks: freeze at ``now`` (null: back to the wall
        clock), then ``advance`` that many seconds; ``parse`` reads the platform's times."""
        if "now" in asked:
            self.frozen_now = None if asked["now"] is None else parse(asked["now"])
        if asked.get("advance"):
            self.frozen_now = self.now() + int(asked["advance"])

    def local(self, epoch: int) -> int:
        """The shop's wall-clock time of ``epoch``, as seconds of a naive timeline."""
        return epoch + _utc_offset(self.tz, epoch // 900)


@lru_cache(maxsize=65536)
def _utc_offset(tz: ZoneInfo, quarter: int) -> int:
    # every zone changes offset on a quarter hour, so one lookup per quarter is exact
    offset = datetime.fromtimestamp(quarter * 900, tz).utcoffset()
    return int(offset.total_seconds()) if offset else 0
