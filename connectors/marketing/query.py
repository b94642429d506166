"""The Marketing API's listing language, shared by the HTTP client and the sandbox.

One vocabulary on both sides means the client cannot build a query the sandbox does not
understand, and the sandbox cannot accept one the spec does not define.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

DEFAULT_LIMIT = 10
"""Page size when a listing request gives no ``limit`` (spec, Limits)."""

MAX_LIMIT = 1000
"""Largest ``limit`` accepted; the spec does not show one, the sandbox enforces this."""


class Operator(StrEnum):
    """Filter operators, spelled exactly as the API expects them (uppercase)."""

    EQUALS = "EQUALS"
    NOT_EQUALS = "NOT_EQUALS"
    CONTAINS = "CONTAINS"
    NOT_CONTAINS = "NOT_CONTAINS"
    STARTS_WITH = "STARTS_WITH"
    ENDS_WITH = "ENDS_WITH"
    LESS_THAN = "LESS_THAN"
    LESS_THAN_OR_EQUAL_TO = "LESS_THAN_OR_EQUAL_TO"
    GREATER_THAN = "GREATER_THAN"
    GREATER_THAN_OR_EQUAL_TO = "GREATER_THAN_OR_EQUAL_TO"
    IN = "IN"
    NOT_IN = "NOT_IN"
    LIKE = "LIKE"
    BETWEEN = "BETWEEN"
    NOT_BETWEEN = "NOT_BETWEEN"


MULTI_VALUE_OPERATORS: frozenset[Operator] = frozenset(
    {Operator.IN, Operator.NOT_IN, Operator.BETWEEN, Operator.NOT_BETWEEN}
)
"""Operators taking an array (or a comma-separated string); all others take one value."""


class Filter(BaseModel):
    """One criterion of ``filters`` / ``orFilters`` (or of an event listing's ``filter``)."""

    model_config = ConfigDict(frozen=True)

    field: str
    operator: Operator
    values: list[Any]


class OrderBy(BaseModel):
    """One sorting criterion of ``order``; ``type`` is lowercase on the wire."""

    model_config = ConfigDict(frozen=True)

    field: str
    type: Literal["asc", "desc"] = "asc"
