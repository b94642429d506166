"""The check of a cron schedule, by Dagster's own validator: the engine's one import of
Dagster (``tests/test_layers.py`` names it).

Dagster reads cron expressions with its vendored copy of croniter (``dagster._vendored``,
croniter 6.0.0, copied in because its author planned to take it off PyPI) plus rules of its
own (five fields only, no 30 or 31 February). No declared or transitive dependency gives the
same reading, so the engine asks Dagster rather than a second parser that could disagree.
"""

from __future__ import annotations

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
