"""How the configuration says what is wrong: one line per problem, naming the field and
the fix, with the values it shows short and escaped (a file may hold anything)."""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str], path: Path | None = None) -> None:
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{len(problems)} problem(s) in the configuration:\n"
                         + "\n".join(f"  - {p}" for p in problems))


def shown(value: Any) -> str:
    """A value for a message: quoted, escaped, and short (a file may hold anything)."""
    return reprlib.repr(value)


_HINTS = {
    "missing": "add it",
    "extra_forbidden": "remove it (or check its spelling)",
    "literal_error": "use one of the allowed values",
    "int_parsing": "use a whole number",
    "date_from_datetime_parsing": "use a date like 2024-01-31",
    "date_parsing": "use a date like 2024-01-31",
    "string_pattern_mismatch": "see the expected pattern",
}


def describe(exc: ValidationError) -> list[str]:
    """One line per problem: where it is, what is wrong, how to fix it."""
    lines = []
    for err in exc.errors(include_url=False):
        where = ""
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        message = str(err["msg"]).removeprefix("Value error, ")
        hint = _HINTS.get(err["type"])
        if err["type"] == "literal_error":
            message = f"{message} (got {shown(err.get('input'))})"
        lines.append(f"{where or 'file'}: {message}" + (f" — {hint}" if hint else ""))
    return lines
