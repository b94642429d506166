"""The listing grammar the server accepts (spec, "Common listing parameters" and "Limits")."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

DEFAULT_LIMIT = 10
"""Records per page when a listing names no ``limit`` (spec, Limits)."""

DEFAULT_OFFSET = 0
"""Records skipped when a listing names no ``offset`` (spec, Limits)."""

MAX_LIMIT = 1000
"""Largest ``limit`` the server answers: the spec shows none, a page past it is refused."""


class Operator(StrEnum):
    """The fifteen filter operators of the spec, uppercase as they travel."""

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


#: a low and a high bound, both inclusive
RANGE_OPERATORS: frozenset[Operator] = frozenset({Operator.BETWEEN, Operator.NOT_BETWEEN})
#: one or more values
LIST_OPERATORS: frozenset[Operator] = frozenset({Operator.IN, Operator.NOT_IN})
MULTI_VALUE_OPERATORS: frozenset[Operator] = RANGE_OPERATORS | LIST_OPERATORS
"""The spec's "multi-value use": an array or a comma-separated string; the others take one."""


class Filter(BaseModel):
    """One parsed criterion of ``filters`` / ``orFilters`` (or an event listing's ``filter``),
    its values already a list whatever form they came in."""

    model_config = ConfigDict(frozen=True)

    field: str
    operator: Operator
    values: list[Any]


class OrderBy(BaseModel):
    """One parsed sorting criterion of ``order``."""

    model_config = ConfigDict(frozen=True)

    field: str
    type: Literal["asc", "desc"] = "asc"
