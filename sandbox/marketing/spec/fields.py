"""The value types of the items the server stores, and the words it refuses a value with.

Timestamps and dates stay the strings that were sent (checked to parse as ISO 8601), so that
what is read back equals what was written; integers are the service's signed 64 bits.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated

from pydantic import AfterValidator, Field

#: the integers the service holds: signed 64-bit
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
#: ``text@text.text``, matched whole; each run possessive and the domain's first dot after
#: its first character, so a long domain is read in linear time
_EMAIL = re.compile(r"[^@\s]++@[^@\s][^@\s.]*+\.[^@\s]+")


def _timestamp(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 timestamp") from None
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"'{value}' is past the range of dates (years 1 to 9999) once in"
                         " UTC") from None
    return value


def _date(value: str) -> str:
    try:
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 date (YYYY-MM-DD)") from None
    return value


def _email(value: str) -> str:
    if _EMAIL.fullmatch(value) is None:
        raise ValueError(f"'{value}' is not a well-formed email address")
    return value


#: ``ts`` of the item tables
Timestamp = Annotated[str, AfterValidator(_timestamp)]
#: ``birth_date`` (date)
IsoDate = Annotated[str, AfterValidator(_date)]
Email = Annotated[str, AfterValidator(_email)]
#: string ids: not empty, and no longer than the service's indexed text columns
Id = Annotated[str, Field(min_length=1, max_length=191)]
#: integer ids (products, addresses, images...): never negative
IntId = Annotated[int, Field(ge=0, le=MAX_INT)]
#: ``en``, ``fr-FR``, ``pt_BR`` (pydantic's patterns are Rust regexes: ``$`` ends the text)
Lang = Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,4})?$")]
#: ISO 4217
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
#: ``num`` amounts: finite and not negative
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Quantity = Annotated[int, Field(ge=0, le=MAX_INT)]
#: stock may run below zero
Count = Annotated[int, Field(ge=MIN_INT, le=MAX_INT)]
#: long descriptions: a TEXT column
Text = Annotated[str, Field(max_length=65535)]
