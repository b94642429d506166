"""The check of a cron schedule, by Dagster's own validator: the engine's one import of
Dagster (``tests/test_layers.py`` names it).

Dagster reads cron expressions with its vendored copy of croniter (``dagster._vendored``,
croniter 6.0.0, copied in because its author planned to take it off PyPI) plus rules of its
own (five fields only, no 30 or 31 February). No declared or transitive dependency gives the
same reading, so the engine asks Dagster rather than a second parser that could disagree.
"""

from __future__ import annotations

import functools
import hashlib
import re

from pipelines.engine.config.errors import shown


def cron_schedule(value: str | None) -> str | None:
    """``value`` if Dagster can run it as a schedule: a file that passes never stops the
    code location from loading."""
    if value is None:
        return value
    from dagster._utils.schedules import is_valid_cron_string

    try:
        valid = is_valid_cron_string(value)
    except Exception:  # noqa: BLE001 - the parser's own errors on odd input mean "not valid"
        valid = False
    if not valid:
        raise ValueError(f'{shown(value)} is not a cron expression; e.g. "*/15 * * * *"'
                         " (minute hour day-of-month month day-of-week)")
    return value


_EVERY = re.compile(r"^\*/([1-9][0-9]?) \* \* \* \*$")


def every_minutes(cron: str) -> int | None:
    """N for ``*/N * * * *`` where N divides the hour (runs at a fixed minute of a period
    of N minutes), else None."""
    match = _EVERY.match(cron)
    return int(match[1]) if match and 60 % int(match[1]) == 0 else None


def _preferred(name: str, every: int) -> int:
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % every


@functools.lru_cache(maxsize=8)  # one configuration asks once per source
def spread(names: tuple[str, ...], every: int) -> dict[str, int]:
    """A minute offset within ``every`` minutes for each name: its hash's, unless that
    minute already holds its share (``ceil(len(names) / every)``), then the next free one.

    Stable: a name keeps its minute as sources come and go, unless its minute is full; and
    no minute holds more than its share, so hundreds of sources on one default schedule
    start a few at a time instead of all in the same second."""
    share = -(-len(names) // every)
    load = [0] * every
    offsets: dict[str, int] = {}
    for name in sorted(names, key=lambda n: (_preferred(n, 1 << 30), n)):
        minute = _preferred(name, every)
        while load[minute] >= share:
            minute = (minute + 1) % every
        load[minute] += 1
        offsets[name] = minute
    return offsets


def at_offset(every: int, offset: int) -> str:
    """Every ``every`` minutes from minute ``offset`` of the hour, as cron."""
    return f"{offset}-59/{every} * * * *" if every < 60 else f"{offset} * * * *"


def spread_cron(cron: str, names: tuple[str, ...], name: str) -> str:
    """``cron`` for ``name`` among ``names`` sharing it: an "every N minutes" at the minute
    ``spread`` gives it; any other cron as it is."""
    every = every_minutes(cron)
    return at_offset(every, spread(names, every)[name]) if every else cron
