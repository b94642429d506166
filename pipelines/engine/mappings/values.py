"""What one value of a record becomes for a field of a given kind (text, integer, float,
flag, timestamp, date), by the rules in columns.py's docstring.

pydantic's lax mode converts (one ``TypeAdapter`` per kind, built once). Before it, the
rules that refuse what the API cannot be given exactly (``Unfit``: bytes the source's
encoding could not decode, a float id past 2^53, digits other than ASCII ones, magnitudes
past 64 bits or past any float, checked before conversion); and where lax mode reads
otherwise than a shop's data wants, a rule of our own, each said where it is applied.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from connectors.sources.exact import describe_undecodable, escape_undecodable, undecodable
from pipelines.engine.mappings.base import utc

#: the integers the API takes (signed 64-bit), and the longest id made from a number
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
MAX_ID_DIGITS = 191
#: integers a float holds exactly, each apart from its neighbours
EXACT_FLOAT = 2**53


class Unfit(ValueError):
    """A value the API cannot be given as the source holds it: the reason, and what to
    show of the value in the quarantined item."""

    def __init__(self, reason: str, shown: Any) -> None:
        super().__init__(reason)
        self.shown = shown


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text) if len(text) <= 40 else repr(text[:30]) + f"… ({len(text):,} characters)"


def _number(value: Any) -> Decimal | None:
    """A number as the source wrote it, exactly (None: not a number). Text is read as
    ASCII digits only (``Decimal("١٢")`` is 12: another shop's 12 is not this one), with
    spaces between digit groups and exponents (``1e3``) allowed, which pydantic's reading
    of text as an integer refuses."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        if not text.isascii():
            if any(c.isdigit() and not c.isascii() for c in text):
                raise Unfit(f"{_short(value)} is not a number in ASCII digits", value)
            return None
        try:
            return Decimal(text)
        except InvalidOperation:
            return None
    return None


def _integral(number: Decimal | None, digits: int = MAX_ID_DIGITS) -> int | None:
    """The whole number ``number`` is (None when it is not one); more than ``digits``
    digits is refused before ``int()``, which would take ages on ``1e10000000``."""
    if number is None or not number.is_finite() or number != number.to_integral_value():
        return None
    if number and number.adjusted() >= digits:
        raise Unfit(f"{_short(number)} has more than {digits} digits", str(number))
    return int(number)


def _out_of_range(value: Any) -> Unfit:
    return Unfit(f"{_short(value)} is beyond the range of the API's integers (signed 64-bit)",
                 str(value))


def _not_finite(value: Any) -> Unfit:
    return Unfit(f"{_short(value)} is not a finite number", str(value))


#: pydantic's lax mode, one adapter per kind of value it converts (built once, on first use)
@cache
def _lax(kind: str) -> TypeAdapter[Any]:
    if kind == "str":  # 17 -> "17"
        return TypeAdapter(str, config=ConfigDict(coerce_numbers_to_str=True))
    if kind == "float":  # "Infinity", 1e400: no amount (and JSON has neither)
        return TypeAdapter(Annotated[float, Field(allow_inf_nan=False)])
    return TypeAdapter({"int": int, "bool": bool}[kind])


def _convert(kind: str, value: Any) -> Any:
    """``value`` through pydantic's lax conversion to ``kind``, or as it was when pydantic
    refuses it (validation then names the field)."""
    try:
        return _lax(kind).validate_python(value)
    except ValidationError:
        return value


def _text(value: Any) -> Any:
    """Text from text or a number; a whole number as such (``17``, not ``17.0``). A flag, a
    list, a date: left for validation."""
    if type(value) is str:  # what pydantic gives back (most values: taken at once)
        return value
    if isinstance(value, float | Decimal):
        value = whole if (whole := _integral(_number(value))) is not None else value
    return _convert("str", value) if isinstance(value, int | float | Decimal | str) \
        and not isinstance(value, bool) else value


def _integer(value: Any) -> Any:
    """A whole number within the API's 64 bits, from a number or text of one (``"1e3"``,
    ``"1 000"``, ``"17.0"``); 10^19 and beyond is refused unconverted (``1e10000000``)."""
    if type(value) is int:  # what the conversion gives back, within the range
        if not MIN_INT <= value <= MAX_INT:
            raise _out_of_range(value)
        return value
    number = _number(value)
    if number is None:
        return value  # a flag is not a count
    if number.is_infinite():
        raise _not_finite(value)
    if number.is_finite() and number and number.adjusted() >= 19:
        raise _out_of_range(value)
    whole = _convert("int", number)
    if not isinstance(whole, int):
        return value
    if not MIN_INT <= whole <= MAX_INT:
        raise _out_of_range(value)
    return whole


def _real(value: Any) -> Any:
    """A finite float from a number or text of one."""
    if type(value) is float and math.isfinite(value):  # its shortest repr reads back as it
        return value
    number = _number(value)
    if number is None:
        return value
    try:
        return _lax("float").validate_python(number)
    except ValidationError:  # Infinity, NaN, 1e400 (past any float)
        raise _not_finite(value) from None


def _flag(value: Any) -> Any:
    """A flag from one, 0 or 1, or text pydantic reads as one (``yes``, ``off``, ``t``)."""
    flag = _convert("bool", value.strip() if isinstance(value, str) else value)
    return flag if isinstance(flag, bool) else value


def _timestamp(value: Any) -> Any:
    """ISO 8601 text as the API's UTC timestamp (pydantic would read a number as Unix
    time, and refuses ``2024-05-01Z``)."""
    if not isinstance(value, str):
        return value
    try:
        return utc(value.strip())
    except ValueError:
        return value
    except OverflowError:
        raise Unfit(f"{_short(value)} is past the range of dates (years 1 to 9999)"
                    " once in UTC", value) from None


def _date(value: Any) -> Any:
    """The date of an ISO 8601 date or timestamp (pydantic refuses one with a time)."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip()).date().isoformat()
        except ValueError:
            return value
    return value.isoformat() if isinstance(value, date) else value


_SCALARS: dict[str, Callable[[Any], Any]] = {
    "str": _text, "int": _integer, "float": _real, "bool": _flag, "timestamp": _timestamp,
    "date": _date,
}


def scalar(kind: str, value: Any) -> Any:
    """``value`` as a field of ``kind`` wants it, or as it was when it cannot be converted;
    ``Unfit`` when the API cannot be given it."""
    if value is None or (value == "" and kind != "str"):  # an empty CSV cell is a null
        return None
    if isinstance(value, str) and (found := undecodable(value)) is not None:
        raise Unfit(describe_undecodable(found, "text"), escape_undecodable(value)[:200])
    if isinstance(value, float) and abs(value) > EXACT_FLOAT and kind in ("str", "int"):
        raise Unfit(f"{value!r} is a floating-point number beyond 2^53, which holds no"
                    " id or count exactly: keep it as an integer or text at the source",
                    repr(value))
    convert = _SCALARS.get(kind)
    return convert(value) if convert is not None else value

